// Issue 20, in the browser against a REAL gateway: a server is removed from
// its page by a decision this browser signs with its own (registered) key; the
// gateway verifies it, the agent's listing loses the server's tools at once,
// and the gateway's config no longer has it. Without a reason nothing is sent.
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
const problems = [];

const tools = async () => ((await gw.rpc('tools/list', {})).tools ?? []).map((t) => t.name);

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  gw = new Gateway();
  const [b] = await Promise.all([launch(), gw.start({ servers: ['calm'] })]);
  browser = b;
  await gw.waitServer('calm', (s) => s.status === 'PENDING', 'PENDING');
  await gw.approveServer('calm');
  await gw.waitServer('calm', (s) => s.status === 'TRUSTED', 'TRUSTED');
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  page = await ctx.newPage();
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

describe('removing a server from its page', () => {
  it('signs the removal in the browser; the server and its tools are gone, no restart', async () => {
    await page.goto(gw.base + '/#/settings');
    await page.locator('#api-key').waitFor({ timeout: T });
    await page.fill('#api-key', gw.reviewerKey);
    await page.click('[data-testid=save-key]');
    await page.locator('[data-testid=key-unregistered]').waitFor({ timeout: T });
    await page.fill('#identity', 'browser-reviewer');
    const command = (await page.textContent('[data-testid=register-command] code')).trim();
    const pk = /--public-key ([0-9a-f]{64})/.exec(command)[1];
    await gw.cli('keys', 'register', '--public-key', pk, '--identity', 'human:browser-reviewer');
    assert.ok((await tools()).some((t) => t.startsWith('calm__')));

    await page.evaluate(() => (location.hash = '#/servers/calm'));
    await page.locator('[data-testid=remove-server-open]').click();
    await page.locator('[role=dialog]').waitFor({ timeout: T });
    // No reason: refused here, nothing sent.
    await page.locator('[role=dialog] button', { hasText: 'Sign and remove' }).click();
    await page.locator('[data-testid=remove-error]').waitFor({ timeout: T });
    await page.fill('[data-testid=remove-reason]', 'not needed any more');
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: path.join(shots, 'server-remove.png') });
    await page.locator('[role=dialog] button', { hasText: 'Sign and remove' }).click();
    await page.locator('[data-testid=servers]').or(page.locator('.page h1', { hasText: 'Servers' })).first().waitFor({ timeout: T });
    await waitFor('the tools gone', async () => !(await tools()).some((t) => t.startsWith('calm__')), T);
    assert.doesNotMatch(fs.readFileSync(gw.config, 'utf8'), /\[servers\.calm\]/);
    const { servers } = await gw.api('/api/v1/servers');
    assert.ok(!servers.some((s) => s.name === 'calm'), JSON.stringify(servers));
    const log = await gw.api('/api/v1/log?from=0&limit=500');
    const removed = log.entries.map((e) => e.entry).find((e) => e.type === 'server.removed');
    assert.equal(removed?.approver, 'human:browser-reviewer', JSON.stringify(removed));
  });

  it('had no page errors', () => {
    assert.deepEqual(problems, []);
  });
});
