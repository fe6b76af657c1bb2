// "Connect a client" in Settings (issue 19 item 2), in a real browser against a
// real gateway whose user has Claude Code set up (tests/data/connect/claude-code,
// the real peers' paths filled in): the card lists the clients found and previews
// per server what moves behind the gateway and how the client will reach it.
// Connecting and undoing are the machine owner's (issue 39 item 1): in a browser
// the card names the command to run, the reviewer API refuses them, and the
// owner's `interlock connect` (the file rewritten, the upstreams in the gateway
// config; undone byte for byte) shows on the card. The desktop app's own path —
// a native dialog naming the commands — is tests/desktop/e2e.py's first run.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoDir, waitFor, screenshotsDir } from './harness.mjs';
import { FreshGateway } from './fresh.mjs';
import { launch } from './browser.mjs';

const shots = screenshotsDir;
const T = 20_000;

let gw;
let browser;
let page;
let home;
let original;
const problems = [];

function peer(name) {
  const v = process.env[name];
  if (!v) throw new Error(`$${name} is not set: run under scripts/ui.sh test (it runs scripts/peers.sh)`);
  return v;
}

async function shot(name) {
  await page.evaluate(() => document.fonts.ready);
  await page.evaluate(() => document.querySelector('.toasts')?.setAttribute('style', 'visibility:hidden'));
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  await page.evaluate(() => document.querySelector('.toasts')?.removeAttribute('style'));
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'interlock-connect-home-'));
  original = fs
    .readFileSync(path.join(repoDir, 'tests/data/connect/claude-code/.claude.json'), 'utf8')
    .replaceAll('@NODE@', peer('INTERLOCK_PEERS_NODE'))
    .replaceAll('@EVERYTHING@', peer('INTERLOCK_PEERS_SERVER_EVERYTHING'))
    .replaceAll('@TIME@', peer('INTERLOCK_PEERS_TIME_SERVER'));
  fs.writeFileSync(path.join(home, '.claude.json'), original);
  gw = new FreshGateway();
  [browser] = await Promise.all([
    launch(),
    gw.startFresh({ env: { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') } }),
  ]);
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  page = await ctx.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await gw.signIn(page, 'settings-user');
});

after(async () => {
  await browser?.close();
  await gw?.stop();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

const claude = () => fs.readFileSync(path.join(home, '.claude.json'), 'utf8');
const row = (client) => page.locator(`[data-testid=client][data-client=${client}]`);

describe('Settings: connect a client', () => {
  it('lists the clients found with a per-server preview and how the client will reach the gateway', async () => {
    await page.evaluate(() => (location.hash = '#/settings'));
    await row('claude-code').locator('[data-testid=client-preview]').waitFor({ timeout: T });
    const actions = await row('claude-code').locator('[data-testid=client-server]').evaluateAll((rs) =>
      Object.fromEntries(rs.map((r) => [r.getAttribute('data-server'), r.getAttribute('data-action')])),
    );
    assert.deepEqual(actions, { everything: 'import', time: 'import', linear: 'keep', github: 'keep' });
    const everything = await row('claude-code').locator('[data-server=everything]').textContent();
    assert.match(everything, /upstream everything .*pending review; EVERYTHING_TOKEN into the OS keychain/);
    assert.match(await row('claude-code').locator('[data-testid=client-reach]').textContent(), new RegExp(`Streamable HTTP at ${gw.base}/mcp with its own agent key connect-claude-code`));
    assert.equal(await row('cursor').getAttribute('data-found'), 'false');
    assert.equal(await row('cursor').locator('[data-testid=client-connect]').count(), 0);
    // A browser is not the machine's owner: no Connect button, the command instead.
    assert.equal(await row('claude-code').locator('[data-testid=client-connect]').count(), 0);
    assert.match(await row('claude-code').locator('[data-testid=client-owner-command]').textContent(), /run interlock connect claude-code in a terminal there, or use the desktop app/);
    await page.locator('[data-testid=connect-clients]').scrollIntoViewIfNeeded();
    await shot('settings-connect');
  });

  it('the reviewer API refuses to connect or undo: an owner action', async () => {
    const answers = await page.evaluate(async () => {
      const key = localStorage.getItem('interlock.apiKey');
      const post = async (what) => {
        const r = await fetch(`/api/v1/clients/claude-code/${what}`, { method: 'POST', headers: { Authorization: `Bearer ${key}` } });
        return [r.status, (await r.json()).error.code];
      };
      return [await post('connect'), await post('undo')];
    });
    assert.deepEqual(answers, [
      [403, 'owner_action'],
      [403, 'owner_action'],
    ]);
    assert.equal(claude(), original);
  });

  it('the owner connects at the terminal: the file reaches the gateway, the upstreams start at once, pending', async () => {
    // The gateway here runs with `--config` outside its data directory: the owner names it.
    await gw.cli('connect', 'claude-code', '--yes', '--config', gw.config);
    await waitFor('the started servers pending', async () => {
      const { servers } = await gw.api('/api/v1/servers');
      const pending = servers.filter((s) => ['everything', 'time'].includes(s.name) && s.status === 'PENDING');
      return pending.length === 2 ? pending : null;
    }, 60_000);
    const rewritten = JSON.parse(claude());
    assert.equal(rewritten.mcpServers.interlock.url, `${gw.base}/mcp`);
    assert.ok(!rewritten.mcpServers.everything && !rewritten.mcpServers.time);
    const config = fs.readFileSync(gw.config, 'utf8');
    assert.match(config, /\[servers\.everything\]/);
    assert.match(config, /\[servers\.time\]/);
    assert.doesNotMatch(config, /fixture-token-for-claude-code/, 'the secret went to the keychain, not the file');
    await page.evaluate(() => (location.hash = '#/inbox'));
    await page.evaluate(() => (location.hash = '#/settings'));
    await row('claude-code').locator('[data-testid=client-state]').waitFor({ timeout: T });
    assert.equal(await row('claude-code').locator('[data-testid=client-state]').textContent(), 'CONNECTED');
    assert.match(await row('claude-code').locator('[data-testid=client-owner-command]').textContent(), /interlock connect --undo claude-code/);
    await shot('settings-connected');
  });

  it('the owner undoes at the terminal: the file back byte for byte, the upstreams gone', async () => {
    await gw.cli('connect', '--undo', 'claude-code', '--config', gw.config);
    assert.equal(claude(), original);
    assert.doesNotMatch(fs.readFileSync(gw.config, 'utf8'), /\[servers\.time\]/);
    await page.evaluate(() => (location.hash = '#/inbox'));
    await page.evaluate(() => (location.hash = '#/settings'));
    await row('claude-code').locator('[data-testid=client-state]').waitFor({ state: 'detached', timeout: T });
    assert.match(await row('claude-code').locator('[data-testid=client-owner-command]').textContent(), /interlock connect claude-code/);
  });

  it('the first run (#/welcome): the approver key, the clients found, then what arrived', async () => {
    await page.evaluate(() => (location.hash = '#/settings'));
    await page.locator('[data-testid=fingerprint]').waitFor({ timeout: T });
    const fingerprint = await page.textContent('[data-testid=fingerprint]');
    await page.evaluate(() => (location.hash = '#/welcome'));
    await page.locator('[data-testid=welcome]').waitFor({ timeout: T });
    await page.locator('[data-testid=welcome-fingerprint]', { hasText: fingerprint }).waitFor({ timeout: T });
    // Only the clients found on this machine are offered.
    await row('claude-code').locator('[data-testid=client-preview]').waitFor({ timeout: T });
    const offered = await page.$$eval('[data-testid=client]', (cs) => cs.map((c) => c.getAttribute('data-client')));
    assert.deepEqual(offered, ['claude-code']);
    // The server configured before the first start waits for review.
    await page.locator('[data-testid=arrived][data-key="server:newcomer"]').waitFor({ timeout: 60_000 });
    assert.match(await page.textContent('[data-testid=arrived][data-key="server:newcomer"]'), /PENDING/);
    await shot('welcome');
    await page.click('[data-testid=welcome-done]');
    await page.locator('[data-testid=inbox]').waitFor({ timeout: T });
  });

  it("guards a coding agent's own tools: each agent's settings diff, secrets masked, the owner's command", async () => {
    // Issue 40: Claude Code's user settings hold a token; the diff the page shows masks it and the key.
    const settings = path.join(home, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(settings), { recursive: true });
    const token = 'ghp_' + 'browserTokenNotForThePage0123456789ab';
    const before = JSON.stringify({ model: 'opus', env: { GITHUB_TOKEN: token } }, null, 2) + '\n';
    fs.writeFileSync(settings, before);
    await page.evaluate(() => (location.hash = '#/inbox'));
    await page.evaluate(() => (location.hash = '#/settings'));
    const hooks = (client) => page.locator(`[data-testid=agent-hooks][data-client=${client}]`);
    await hooks('claude-code').locator('[data-testid=hooks-state]', { hasText: 'NOT GUARDED' }).waitFor({ timeout: T });
    const rows = await page.$$eval('[data-testid=agent-hooks]', (rs) => rs.map((r) => r.getAttribute('data-client')));
    assert.deepEqual(rows, ['claude-code', 'cursor', 'codex', 'gemini-cli']);
    assert.equal(await hooks('cursor').locator('[data-testid=hooks-state]').textContent(), 'NO SETTINGS YET');
    // A browser is not the machine's owner: no Install button, the command instead.
    assert.equal(await hooks('claude-code').locator('[data-testid=hooks-install]').count(), 0);
    assert.match(
      await hooks('claude-code').locator('[data-testid=hooks-owner-command]').textContent(),
      /run interlock hooks install claude-code --yes in a terminal there/,
    );
    await hooks('claude-code').locator('[data-testid=hooks-show-diff]').click();
    const diff = hooks('claude-code').locator('[data-testid=hooks-diff]');
    await diff.locator('.d2h-file-wrapper').waitFor({ timeout: T });
    const text = await diff.textContent();
    assert.match(text, /hook claude-code/);
    assert.match(text, /INTERLOCK_API_KEY=<agent key>/);
    assert.ok(!text.includes(token), 'the token in the settings reached the page');
    // The owner's choice when the gateway cannot answer changes the preview and the command.
    await page.click('[data-testid=hooks-ask]');
    await hooks('claude-code').locator('[data-testid=hooks-owner-command]', { hasText: '--on-unreachable ask' }).waitFor({ timeout: T });
    await page.click('[data-testid=hooks-deny]');
    await hooks('claude-code').locator('[data-testid=hooks-show-diff]').click();
    await diff.locator('.d2h-file-wrapper').waitFor({ timeout: T });
    await page.locator('[data-testid=agent-hooks-card]').scrollIntoViewIfNeeded();
    await shot('settings-hooks');
    // The owner installs at the terminal: the row says it is guarded, with the undo command.
    await gw.cli('hooks', 'install', 'claude-code', '--yes');
    await page.evaluate(() => (location.hash = '#/inbox'));
    await page.evaluate(() => (location.hash = '#/settings'));
    await hooks('claude-code').locator('[data-testid=hooks-state]', { hasText: 'GUARDED' }).waitFor({ timeout: T });
    assert.equal(await hooks('claude-code').getAttribute('data-installed'), 'true');
    assert.match(await hooks('claude-code').locator('[data-testid=hooks-owner-command]').textContent(), /interlock hooks install claude-code --undo/);
    await gw.cli('hooks', 'install', 'claude-code', '--undo');
    assert.equal(fs.readFileSync(settings, 'utf8'), before);
  });

  it('had no page errors', () => {
    assert.deepEqual(problems, []);
  });
});
