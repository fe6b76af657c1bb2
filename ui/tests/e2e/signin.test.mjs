// The headless first run in a real browser (issue 19): a fresh `interlock serve
// --ui ui/dist` (no reviewer, no approver key) prints a one-time sign-in link;
// Chromium follows it, makes its own signing key, signs in, lands in the inbox
// and approves the pending server there with that key — no CLI step between.
// Then the spent link is refused in a second browser.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor, screenshotsDir } from './harness.mjs';
import { FreshGateway } from './fresh.mjs';
import { launch } from './browser.mjs';

const shots = screenshotsDir;
const T = 20_000;

let gw;
let browser;
const problems = [];

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  gw = new FreshGateway();
  [browser] = await Promise.all([launch(), gw.startFresh()]);
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

async function newPage() {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // The refused second sign-in logs its 401 as a failed resource load.
    if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  return page;
}

describe('the headless first run: a one-time sign-in link', () => {
  it('is printed by the first start, with the token in the fragment', () => {
    assert.match(gw.link, new RegExp(`^${gw.base.replace(/[.]/g, '\\.')}/#/signin/ils_[A-Za-z0-9_-]{43}$`));
  });

  it('makes the browser that follows it a reviewer that lands in the inbox and approves', async () => {
    const page = await newPage();
    await page.goto(gw.link);
    await page.locator('[data-testid=signin]').waitFor({ timeout: T });
    // The name field has focus; the browser's key is made before the click.
    await waitFor('the name field focused', () => page.evaluate(() => document.activeElement?.id === 'signin-name'), T);
    await waitFor('a fingerprint', async () => /^[0-9a-f]{4}(:[0-9a-f]{4}){3}$/.test(await page.textContent('[data-testid=signin-fingerprint]')), T);
    const fingerprint = await page.textContent('[data-testid=signin-fingerprint]');
    await page.keyboard.type('newcomer');
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: path.join(shots, 'signin.png') });
    await page.keyboard.press('Enter');

    // The inbox, with the pending server, and the spent token out of the URL.
    await page.locator('[data-testid=row][data-key="server:newcomer"]').waitFor({ timeout: 60_000 });
    assert.equal(await page.evaluate(() => location.hash), '#/inbox');
    assert.doesNotMatch(await page.evaluate(() => location.href), /ils_/);
    await page.locator('[data-testid=toast]', { hasText: 'Signed in as human:newcomer' }).waitFor({ timeout: T });
    await page.evaluate(() => document.querySelector('.toasts')?.setAttribute('style', 'visibility:hidden'));
    await page.screenshot({ path: path.join(shots, 'signin-inbox.png') });
    await page.evaluate(() => document.querySelector('.toasts')?.removeAttribute('style'));
    const key = await page.evaluate(() => localStorage.getItem('interlock.apiKey'));
    assert.match(key, /^ilk_/);
    gw.reviewerKey = key;

    // Settings shows this browser's key registered under the name typed.
    await page.evaluate(() => (location.hash = '#/settings'));
    await page.locator('[data-testid=key-registered]').waitFor({ timeout: T });
    assert.match(await page.textContent('[data-testid=key-registered]'), /human:newcomer/);
    assert.equal(await page.textContent('[data-testid=fingerprint]'), fingerprint);

    // Approve the pending server with the browser's own key.
    await page.evaluate(() => (location.hash = '#/servers/newcomer'));
    await page.locator('[data-testid=approve]:not([disabled])').waitFor({ timeout: T });
    await page.evaluate(() => document.activeElement?.blur?.());
    await page.keyboard.press('a');
    await page.locator('[role=dialog]').waitFor({ timeout: T });
    await waitFor('the reason field focused', () => page.evaluate(() => document.activeElement?.id === 'reason'), T);
    await page.keyboard.press('Enter');
    await page.locator('[role=dialog]').waitFor({ state: 'detached', timeout: T });
    await page.locator('.page-head [data-status=TRUSTED]').waitFor({ timeout: T });
    const { server } = await gw.api('/api/v1/servers/newcomer');
    assert.equal(server.status, 'TRUSTED');
    const { approvers } = await gw.api('/api/v1/approvers');
    const mine = approvers.find((a) => a.identity === 'human:newcomer');
    assert.ok(mine, JSON.stringify(approvers));
    // The approval on the log is signed by the key the link registered.
    const { entries } = await gw.api('/api/v1/log?from=0&limit=1000');
    const types = entries.map((e) => e.entry.type);
    for (const t of ['signin.issued', 'apikey.issued', 'approver.registered', 'signin.redeemed', 'server.approved'])
      assert.ok(types.includes(t), `${t} in ${types}`);
    const approved = entries.find((e) => e.entry.type === 'server.approved');
    assert.ok(JSON.stringify(approved.entry).includes(mine.key_id), JSON.stringify(approved.entry));
    await page.close();
  });

  it('refuses the spent link in a second browser', async () => {
    const page = await newPage();
    await page.goto(gw.link);
    await page.locator('#signin-name').waitFor({ timeout: T });
    await waitFor('a fingerprint', async () => /:/.test(await page.textContent('[data-testid=signin-fingerprint]')), T);
    await page.fill('#signin-name', 'second-browser');
    await page.click('[data-testid=signin-submit]');
    await page.locator('[data-testid=signin-error]').waitFor({ timeout: T });
    assert.match(await page.textContent('[data-testid=signin-error]'), /unknown, already used or expired/);
    assert.equal(await page.evaluate(() => localStorage.getItem('interlock.apiKey')), null);
    await page.screenshot({ path: path.join(shots, 'signin-refused.png') });
    await page.close();
  });

  it('had no page errors', () => {
    assert.deepEqual(problems, []);
  });
});
