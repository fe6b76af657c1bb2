// The README's headless steps, followed verbatim (issue 19): the three code
// blocks of "Headless, step by step" are read from README.md and run as written
// with bash, as a new user of a machine without a desktop session would: a fresh
// home directory (no keyring, no data, no `interlock` on the PATH), no session
// bus, no display. The printed sign-in link is opened in Chromium, the second
// terminal's commands reach the live gateway through its admin socket, which
// starts the servers connect imported at once (no restart, issue 20); the
// browser approves a server Claude Code had, which the client —
// configured exactly as `interlock connect` rewrote its file — then reaches.
//
// What the test decides, not the user: the home directory, a Claude Code
// config in it (tests/data/connect/claude-code, the real peers' paths filled in),
// the port (a free one in the data directory's gateway.toml: 8717 may be taken
// by another run), and the binary: the debug build the test run made
// (INTERLOCK_RUN_BIN; a user's `scripts/run` builds a release binary, and a
// build here would compile again with the CLI's own features: issue 45 item 7).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { interlockBin, repoDir, waitFor, screenshotsDir } from './harness.mjs';
import { launch } from './browser.mjs';

const shots = screenshotsDir;
const T = 30_000;

/** The README's fenced block after `<!-- readme-test: NAME -->`. */
export function readmeBlock(readme, name) {
  const m = new RegExp(`<!-- readme-test: ${name} -->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (!m) throw new Error(`README.md has no block marked readme-test: ${name}`);
  return m[1];
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function peer(name) {
  const v = process.env[name];
  if (!v) throw new Error(`$${name} is not set: run under scripts/ui.sh test (it runs scripts/peers.sh)`);
  return v;
}

const readme = fs.readFileSync(path.join(repoDir, 'README.md'), 'utf8');
const blocks = {
  first: readmeBlock(readme, 'terminal-1'),
  second: readmeBlock(readme, 'terminal-2'),
};

let home;
let env;
let terminal1;
let browser;
let page;
const t0 = Date.now();
const seconds = () => ((Date.now() - t0) / 1000).toFixed(1);

/** A new user's environment: only the system's, a fresh home, no bus, no display. */
function userEnv() {
  const realHome = os.userInfo().homedir;
  const e = {};
  for (const k of ['PATH', 'LANG', 'LC_ALL', 'TERM', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR', 'TZ']) if (process.env[k]) e[k] = process.env[k];
  return {
    ...e,
    HOME: home,
    // Where rustup and cargo already are (a new user's would be in their home).
    CARGO_HOME: process.env.CARGO_HOME || path.join(realHome, '.cargo'),
    RUSTUP_HOME: process.env.RUSTUP_HOME || path.join(realHome, '.rustup'),
    CARGO_TARGET_DIR: path.dirname(path.dirname(interlockBin())),
    INTERLOCK_RUN_BIN: interlockBin(),
  };
}

/** Runs a block in a new process group, as a terminal would. */
function terminal(block) {
  return spawn('bash', ['-e', '-c', block], {
    cwd: repoDir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function collect(child) {
  const out = { stdout: '', stderr: '', lines: [] };
  createInterface({ input: child.stdout }).on('line', (l) => {
    out.stdout += l + '\n';
    out.lines.push(l);
  });
  child.stderr.on('data', (d) => (out.stderr += d));
  child.exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
  return out;
}

/** Ctrl-C in the terminal: SIGINT to its process group; waits for the end. */
async function ctrlC(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  process.kill(-child.pid, 'SIGINT');
  const t = setTimeout(() => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }, 20_000);
  await child.exited;
  clearTimeout(t);
}

async function waitLine(out, child, re, what, ms = 600_000) {
  return waitFor(
    what,
    () => {
      if (child.exitCode !== null) throw new Error(`the terminal ended (${child.exitCode}) before ${what}:\n${out.stdout}\n${out.stderr.slice(-4000)}`);
      for (const l of out.lines) {
        const m = re.exec(l);
        if (m) return m;
      }
      return null;
    },
    ms,
    200,
  );
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'interlock-readme-home-'));
  env = userEnv();
  // The fixture: a Claude Code user's config, with the peers' real paths.
  const fixture = fs
    .readFileSync(path.join(repoDir, 'tests/data/connect/claude-code/.claude.json'), 'utf8')
    .replaceAll('@NODE@', peer('INTERLOCK_PEERS_NODE'))
    .replaceAll('@EVERYTHING@', peer('INTERLOCK_PEERS_SERVER_EVERYTHING'))
    .replaceAll('@TIME@', peer('INTERLOCK_PEERS_TIME_SERVER'));
  fs.writeFileSync(path.join(home, '.claude.json'), fixture);
  const data = path.join(home, '.local/share/interlock');
  fs.mkdirSync(data, { recursive: true });
  fs.writeFileSync(path.join(data, 'gateway.toml'), `listen = "127.0.0.1:${await freePort()}"\n`);
  browser = await launch();
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  page = await ctx.newPage();
});

after(async () => {
  if (terminal1) await ctrlC(terminal1);
  await browser?.close();
  if (home && !process.env.INTERLOCK_UI_KEEP) fs.rmSync(home, { recursive: true, force: true });
});

describe('the README, headless, followed verbatim by a new user', () => {
  let link;
  let first;

  it('has the two blocks, with the commands a new user types', () => {
    assert.match(blocks.first, /^scripts\/run$/m);
    assert.match(blocks.second, /interlock agents add /);
    assert.match(blocks.second, /interlock connect claude-code --yes/);
    assert.doesNotMatch(readme, /readme-test: terminal-1-again/, 'no restart step');
    // Nothing on the PATH yet.
    assert.ok(!fs.existsSync(path.join(home, '.local/bin/interlock')));
  });

  it('terminal 1: scripts/run serves the UI and prints a one-time sign-in link', async () => {
    terminal1 = terminal(blocks.first);
    first = collect(terminal1);
    // The test's terminal is a pipe, not a terminal: the link is in an owner-only file, and the output (a log, for
    // all the gateway knows) has only its path (issue 39 item 15).
    const m = await waitLine(first, terminal1, /^sign in: file (\S+)$/, 'the sign-in link file');
    link = fs.readFileSync(m[1], 'utf8').trim();
    assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/#\/signin\/ils_\S+$/);
    assert.equal(fs.statSync(m[1]).mode & 0o777, 0o600);
    assert.ok(!first.stdout.includes(link) && !first.stderr.includes(link), 'the link is not in the output');
    console.log(`# readme: sign-in link printed after ${seconds()} s`);
    assert.ok(fs.lstatSync(path.join(home, '.local/bin/interlock')).isSymbolicLink());
    assert.match(first.stderr, /no Secret Service on the session bus/);
  });

  it('the browser follows the link and becomes a reviewer', async () => {
    await page.goto(link);
    await page.locator('#signin-name').waitFor({ timeout: T });
    await waitFor('a fingerprint', async () => /:/.test(await page.textContent('[data-testid=signin-fingerprint]')), T);
    await page.fill('#signin-name', 'new-user');
    await page.click('[data-testid=signin-submit]');
    await page.locator('[data-testid=inbox]').waitFor({ timeout: T });
    assert.equal(await page.evaluate(() => location.hash), '#/inbox');
  });

  it('terminal 2: agents add and connect reach the live gateway without its keychain', async () => {
    const t2 = terminal(blocks.second);
    const out = collect(t2);
    const { code } = await t2.exited;
    assert.equal(code, 0, `${out.stdout}\n${out.stderr}`);
    assert.ok(out.lines.some((l) => /^ilk_[A-Za-z0-9_-]{43}$/.test(l)), out.stdout);
    assert.match(out.stderr, /by the running gateway/);
    // The client's stdio servers left its file for one entry: the gateway, with its own key.
    const { mcpServers } = JSON.parse(fs.readFileSync(path.join(home, '.claude.json'), 'utf8'));
    assert.ok(!mcpServers.time && !mcpServers.everything, JSON.stringify(mcpServers));
    assert.equal(mcpServers.interlock.type, 'http', JSON.stringify(mcpServers.interlock));
    assert.match(mcpServers.interlock.headers.Authorization, /^Bearer ilk_/);
  });

  it('no restart: the servers wait in the browser’s inbox, started by the same gateway', async () => {
    await page.reload();
    await page.locator('[data-testid=row][data-key="server:time"]').waitFor({ timeout: 60_000 });
    await page.locator('[data-testid=row][data-key="server:everything"]').waitFor({ timeout: 60_000 });
    // The gateway of terminal 1 is still the first one: one listening line.
    assert.equal(first.lines.filter((l) => /^interlock gateway listening on /.test(l)).length, 1, first.stdout);
    console.log(`# readme: connected servers pending in the inbox after ${seconds()} s`);
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: path.join(shots, 'readme-inbox.png') });
  });

  it('approved in the browser, the client reaches the server’s tools as its rewritten file says', async () => {
    await page.evaluate(() => (location.hash = '#/servers/time'));
    await page.locator('[data-testid=approve]:not([disabled])').waitFor({ timeout: T });
    await page.evaluate(() => document.activeElement?.blur?.());
    await page.keyboard.press('a');
    await page.locator('[role=dialog]').waitFor({ timeout: T });
    await waitFor('the reason field focused', () => page.evaluate(() => document.activeElement?.id === 'reason'), T);
    await page.keyboard.press('Enter');
    await page.locator('.page-head [data-status=TRUSTED]').waitFor({ timeout: T });

    const entry = JSON.parse(fs.readFileSync(path.join(home, '.claude.json'), 'utf8')).mcpServers.interlock;
    const tools = await waitFor(
      'the approved tools served to the client',
      async () => {
        const r = await fetch(entry.url, {
          method: 'POST',
          headers: {
            ...entry.headers,
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'MCP-Protocol-Version': '2026-07-28',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
        });
        const body = await r.json();
        const names = (body.result?.tools ?? []).map((t) => t.name);
        return names.some((n) => n.includes('get_current_time')) ? names : null;
      },
      T,
    );
    console.log(`# readme: the client sees its first approved tool after ${seconds()} s (${tools.join(', ')})`);
  });
});
