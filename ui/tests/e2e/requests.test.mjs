// Issue 39 item 1, in the browser against a REAL gateway: a reviewer key can
// only *ask* for a stdio server, since it runs a program on the gateway's
// machine. The Servers page shows the request with its exact command line and
// how the machine's owner confirms it; once confirmed (here through the
// owner's CLI and admin socket), the request is gone and the server is pending.
//
// Run through `scripts/ui.sh test`. Screenshots: ui/test-results/screenshots/.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Gateway, screenshotsDir } from './harness.mjs';
import { launch } from './browser.mjs';

const shots = screenshotsDir;
const T = 20_000;

let gw;
let browser;
let page;
const problems = [];

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  gw = new Gateway();
  const [b] = await Promise.all([launch(), gw.start({ servers: ['calm'] })]);
  browser = b;
  await gw.waitServer('calm', (s) => s.status === 'PENDING', 'PENDING');
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  page = await ctx.newPage();
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(gw.base + '/#/settings');
  await page.locator('#api-key').waitFor({ timeout: T });
  await page.fill('#api-key', gw.reviewerKey);
  await page.click('[data-testid=save-key]');
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

describe('programs a reviewer asked to run', () => {
  it('are shown with their command line, and run only once the owner confirms', async () => {
    const asked = await gw.api('/api/v1/servers', {
      method: 'POST',
      body: JSON.stringify({ name: 'clock', command: '/bin/true', args: ['--utc'] }),
    });
    assert.equal(asked.status, 'REQUESTED');
    await page.evaluate(() => (location.hash = '#/servers'));
    await page.locator('[data-testid=server-requests]').waitFor({ timeout: T });
    assert.equal(await page.textContent('[data-testid=request-command]'), '/bin/true --utc');
    assert.match(await page.textContent('[data-testid=server-requests]'), /interlock servers confirm clock/);
    // Not a server yet: nothing runs.
    assert.equal(await gw.serverStatus('clock'), undefined);
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: path.join(shots, 'server-requests.png') });

    await gw.cli('servers', 'confirm', 'clock');
    await page.locator('[data-testid=server-requests]').waitFor({ state: 'detached', timeout: T });
    await page.locator('[data-testid=row][data-key=clock]').waitFor({ timeout: T });
    assert.deepEqual(problems, []);
  });
});
