// Issue 20, Settings → Keys, in the browser against a REAL gateway: an admin
// token minted on the gateway's machine (`interlock admin token create`) is
// pasted; the keys and their limits are listed; a rate limit and a quota are
// set through the form and enforced on the agent's next calls (HTTP 429 with
// the retry time); an auditor's token sees the keys but its edit is refused
// with the gateway's reason; a key created in the page is shown once; a key's
// alert sinks and minimum severity are set in the same form (an unknown sink
// refused with the gateway's reason).
//
// Run through `scripts/ui.sh test`. Screenshots: ui/test-results/screenshots/.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Gateway, waitFor, screenshotsDir } from './harness.mjs';
import { launch } from './browser.mjs';

const shots = screenshotsDir;
const T = 20_000;

let gw;
let browser;
let page;
let owner;
let auditor;
const problems = [];

const row = (name) => page.locator(`[data-testid=admin-key][data-name="${name}"]`);

async function shot(name) {
  await page.evaluate(() => document.fonts.ready);
  await page.evaluate(() => document.querySelector('.toasts')?.setAttribute('style', 'visibility:hidden'));
  await page.locator('[data-testid=admin-keys]').screenshot({ path: path.join(shots, `${name}.png`) });
  await page.evaluate(() => document.querySelector('.toasts')?.removeAttribute('style'));
}

/** One stateless tools/call with `key`: the HTTP status and Retry-After. */
async function callTool(key) {
  const r = await fetch(`${gw.base}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'calm__greet', arguments: { name: 'Ada' } } }),
  });
  return { status: r.status, retry: r.headers.get('retry-after'), body: await r.json() };
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  gw = new Gateway();
  const [b] = await Promise.all([launch(), gw.start({
      servers: ['calm'],
      // A keys-only alert sink (issue 21) the form can name; nothing listens.
      extra:
        '[alerts]\n[[alerts.sinks]]\nname = "pager"\nkind = "otlp"\nurl = "http://127.0.0.1:9/v1/logs"\nkeys_only = true\n\n' +
        // A model provider (issue 42) the form's models can name; nothing listens.
        '[llm.providers.local]\nbase_url = "http://127.0.0.1:9/v1"\nmodels = ["gpt-4o-mini", "llama3.2"]\n',
    })]);
  browser = b;
  await gw.waitServer('calm', (s) => s.status === 'PENDING', 'PENDING');
  await gw.approveServer('calm');
  await gw.waitServer('calm', (s) => s.status === 'TRUSTED', 'TRUSTED');
  owner = (await gw.cli('admin', 'token', 'create', 'root', '--scope', 'owner')).trim();
  auditor = (await gw.cli('admin', 'token', 'create', 'audit', '--scope', 'auditor')).trim();
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  page = await ctx.newPage();
  page.on('console', (m) => m.type() === 'error' && !/status of (400|403)/.test(m.text()) && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

describe('Settings → Keys', () => {
  it('lists the keys with their limits once an admin token is given', async () => {
    await page.goto(gw.base + '/#/settings');
    await page.locator('#api-key').waitFor({ timeout: T });
    await page.fill('#api-key', gw.reviewerKey);
    await page.click('[data-testid=save-key]');
    await page.fill('#admin-token', owner);
    await page.click('[data-testid=admin-token-use]');
    await page.locator('[data-testid=admin-scope]', { hasText: 'owner' }).waitFor({ timeout: T });
    await row('builder').waitFor({ timeout: T });
    assert.equal((await row('builder').locator('[data-field=rate_per_minute]').textContent()).trim(), '—');
    assert.ok(!(await page.content()).includes(gw.agentKey), 'a key is never shown by the list');
  });

  it('sets a rate and a quota in the form; the agent is held to them on its next calls', async () => {
    assert.equal((await callTool(gw.agentKey)).status, 200);
    await row('builder').locator('[data-testid=admin-edit-open]').click();
    const edit = page.locator('[data-testid=admin-edit]');
    await edit.waitFor({ timeout: T });
    // Bad input: said in the page, nothing sent.
    await edit.locator('[data-testid=admin-rate_per_minute]').fill('-3');
    await edit.locator('[data-testid=admin-save]').click();
    await edit.locator('[data-testid=admin-error]', { hasText: 'positive whole number' }).waitFor({ timeout: T });
    await edit.locator('[data-testid=admin-rate_per_minute]').fill('2');
    await edit.locator('[data-testid=admin-monthly_quota]').fill('50');
    await shot('settings-keys-edit');
    await edit.locator('[data-testid=admin-save]').click();
    await edit.waitFor({ state: 'detached', timeout: T });
    await waitFor('the new limits listed', async () => (await row('builder').locator('[data-field=rate_per_minute]').textContent()).trim() === '2', T);
    assert.equal((await row('builder').locator('[data-field=monthly_quota]').textContent()).trim(), '50');
    // Enforced at once: two calls a minute, then 429 with the retry time.
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await callTool(gw.agentKey));
    assert.deepEqual(results.slice(0, 2).map((r) => r.status), [200, 200]);
    assert.equal(results[2].status, 429, JSON.stringify(results[2].body));
    assert.ok(Number(results[2].retry) >= 1, results[2].retry);
    assert.equal(results[2].body.error.data.limit, 'rate');
    await shot('settings-keys');
  });

  it('names the alert sinks of a key and their minimum severity; an unknown sink is refused', async () => {
    await row('builder').locator('[data-testid=admin-edit-open]').click();
    const edit = page.locator('[data-testid=admin-edit]');
    await edit.waitFor({ timeout: T });
    await edit.locator('[data-testid=admin-alert-sinks]').fill('pager, nope');
    await edit.locator('[data-testid=admin-save]').click();
    await edit.locator('[data-testid=admin-error]', { hasText: 'no sink is named "nope"' }).waitFor({ timeout: T });
    await edit.locator('[data-testid=admin-alert-sinks]').fill('pager');
    await edit.locator('[data-testid=admin-alert-min]').selectOption('high');
    await shot('settings-keys-alerts-edit');
    await edit.locator('[data-testid=admin-save]').click();
    await edit.waitFor({ state: 'detached', timeout: T });
    await row('builder').locator('[data-testid=admin-key-alerts]', { hasText: /alerts →\s*pager\s*\(≥ high\)/ }).waitFor({ timeout: T });
    await shot('settings-keys-alerts');
  });

  it("sets an agent key's models and what a stopped request becomes; a model nobody serves is refused", async () => {
    await row('builder').locator('[data-testid=admin-edit-open]').click();
    const edit = page.locator('[data-testid=admin-edit]');
    await edit.waitFor({ timeout: T });
    await edit.locator('[data-testid=admin-llm-models]').fill('gpt-4o-mini, gpt-5-typo');
    await edit.locator('[data-testid=admin-save]').click();
    await edit.locator('[data-testid=admin-error]', { hasText: 'no provider in [llm] serves "gpt-5-typo"' }).waitFor({ timeout: T });
    await edit.locator('[data-testid=admin-llm-models]').fill('gpt-4o-mini');
    await edit.locator('[data-testid=admin-llm-on-hit]').selectOption('hold');
    await shot('settings-keys-llm-edit');
    await edit.locator('[data-testid=admin-save]').click();
    await edit.waitFor({ state: 'detached', timeout: T });
    await row('builder')
      .locator('[data-testid=admin-key-llm]', { hasText: 'gpt-4o-mini only · holds what the scan stops' })
      .waitFor({ timeout: T });
    const listed = await fetch(`${gw.base}/v1/models`, { headers: { Authorization: `Bearer ${gw.agentKey}` } }).then((r) => r.json());
    assert.deepEqual(
      listed.data.map((m) => m.id),
      ['gpt-4o-mini'],
    );
    await shot('settings-keys-llm');
  });

  it('creates a key, shown once', async () => {
    await page.fill('[data-testid=admin-new-name]', 'nightly');
    await page.click('[data-testid=admin-create]');
    const value = (await page.locator('[data-testid=admin-new-key-value]').textContent({ timeout: T })).trim();
    assert.match(value, /^ilk_/);
    assert.equal((await callTool(value)).status, 200);
    await row('nightly').waitFor({ timeout: T });
  });

  it('an auditor sees the keys; its edit is refused with the gateway’s reason', async () => {
    await page.locator('[data-testid=admin-scope] button', { hasText: 'Forget' }).click();
    await page.fill('#admin-token', auditor);
    await page.click('[data-testid=admin-token-use]');
    await page.locator('[data-testid=admin-scope]', { hasText: 'auditor' }).waitFor({ timeout: T });
    await row('builder').locator('[data-testid=admin-edit-open]').click();
    const edit = page.locator('[data-testid=admin-edit]');
    await edit.locator('[data-testid=admin-rate_per_minute]').fill('1000');
    await edit.locator('[data-testid=admin-save]').click();
    await edit.locator('[data-testid=admin-error]', { hasText: 'auditor scope may not' }).waitFor({ timeout: T });
  });

  it('had no page errors', () => {
    assert.deepEqual(problems, []);
  });
});
