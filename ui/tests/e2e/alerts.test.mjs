// Settings → Alerts (issue 21 item 7), in a real browser against a real gateway
// with two sinks: a webhook to a local HTTP server started here (it stands in
// for the team's SIEM endpoint and records what arrives) and one to a port
// where nothing listens, and a third ("flaky") whose endpoint answers 503 until
// the test lets it through. The card shows each sink's state, lag, deliveries
// and last error, *Send test* reaches the receiver (or says why not), and
// *Redeliver* sends the flaky sink's dead letters once it is back — each
// dead-lettered event exactly once.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { waitFor, screenshotsDir } from './harness.mjs';
import { FreshGateway } from './fresh.mjs';
import { launch } from './browser.mjs';

const shots = screenshotsDir;
const T = 30_000;

let gw;
let browser;
let page;
let receiver;
const received = [];
const problems = [];
// The flaky endpoint: refused (503) until `flakyUp`; what it refused and took.
let flakyUp = false;
const flakyRefused = [];
const flakyTaken = [];

async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function shot(name) {
  await page.evaluate(() => document.fonts.ready);
  await page.evaluate(() => document.querySelector('.toasts')?.setAttribute('style', 'visibility:hidden'));
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const event = JSON.parse(body);
      if (req.url === '/flaky') {
        (flakyUp ? flakyTaken : flakyRefused).push(event);
        res.writeHead(flakyUp ? 200 : 503, { 'content-type': 'application/json' }).end(flakyUp ? '{"ok":true}' : '{"error":"down"}');
        return;
      }
      received.push({ headers: req.headers, body: event });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  const dead = await freePort();
  const sink = (name, url, attempts = 1000) =>
    `[[alerts.sinks]]\nname = "${name}"\nkind = "webhook"\nurl = "${url}"\nsecret_env = "UI_ALERT_SECRET"\n` +
    `backoff_ms = 100\nbackoff_max_ms = 500\nmax_attempts = ${attempts}\ntimeout_ms = 1000\n`;
  gw = new FreshGateway();
  [browser] = await Promise.all([
    launch(),
    gw.startFresh({
      env: { UI_ALERT_SECRET: 'ui-test-secret' },
      extra:
        `[alerts]\npoll_ms = 100\n` +
        sink('siem', `http://127.0.0.1:${receiver.address().port}/hook`) +
        sink('pager-down', `http://127.0.0.1:${dead}/hook`) +
        sink('flaky', `http://127.0.0.1:${receiver.address().port}/flaky`, 2),
    }),
  ]);
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  page = await ctx.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await gw.signIn(page, 'alerts-user');
});

after(async () => {
  await browser?.close();
  await gw?.stop();
  receiver?.close();
});

const row = (sink) => page.locator(`[data-testid=alert-sink][data-sink=${sink}]`);
const detail = (sink) => page.locator(`tr.alert-detail[data-sink=${sink}]`);

describe('Settings: alerts', () => {
  it('shows each sink: the healthy one delivering, the dead one retrying with its error', async () => {
    await page.evaluate(() => (location.hash = '#/settings'));
    await row('siem').waitFor({ timeout: T });
    await waitFor('a delivery shown', async () => Number(await row('siem').locator('[data-testid=alert-delivered]').textContent()) > 0, T);
    assert.ok(received.length > 0, 'the receiver got the events');
    assert.equal(await row('siem').getAttribute('data-state'), 'ok');
    assert.equal((await detail('siem').locator('[data-testid=alert-error]').textContent()).trim(), 'none');
    await waitFor('the dead sink retrying', async () => (await row('pager-down').getAttribute('data-state')) === 'retrying', T);
    await waitFor('its error shown', async () => /could not connect/.test(await detail('pager-down').locator('[data-testid=alert-error]').textContent()), T);
    assert.ok(Number(await row('pager-down').locator('[data-testid=alert-lag]').textContent()) > 0, 'its lag shows');
    assert.equal(await row('pager-down').locator('[data-testid=alert-delivered]').textContent(), '0');
  });

  it('Send test reaches the receiver, and says why the dead sink did not take it', async () => {
    const before = received.filter((r) => r.body.kind === 'alert.test').length;
    await row('siem').locator('[data-testid=alert-test]').click();
    await detail('siem').locator('[data-testid=alert-test-result]', { hasText: 'accepted by the receiver' }).waitFor({ timeout: T });
    const tests = received.filter((r) => r.body.kind === 'alert.test');
    assert.equal(tests.length, before + 1);
    assert.equal(tests.at(-1).body.test, true);
    assert.match(tests.at(-1).headers['idempotency-key'], /^test-/);
    await row('pager-down').locator('[data-testid=alert-test]').click();
    await detail('pager-down').locator('[data-testid=alert-test-result]', { hasText: 'not accepted' }).waitFor({ timeout: T });
    assert.match(await detail('pager-down').locator('[data-testid=alert-test-result]').textContent(), /could not connect/);
    await page.locator('[data-testid=alert-sinks]').scrollIntoViewIfNeeded();
    await shot('settings-alerts');
    assert.deepEqual(problems, []);
  });

  it('Redeliver sends the dead-lettered events once the sink is back, each exactly once', async () => {
    await waitFor('the flaky sink dead-lettered', async () => Number(await row('flaky').locator('[data-testid=alert-dead]').textContent()) > 0, T);
    await waitFor('its cursor past what it refused', async () => (await row('flaky').getAttribute('data-state')) === 'dead_letter', T);
    const dead = new Set(flakyRefused.map((e) => e.index));
    assert.ok(dead.size > 0);
    assert.equal(await row('pager-down').locator('[data-testid=alert-redeliver]').isDisabled(), true, 'nothing to redeliver there');
    flakyUp = true;
    const button = row('flaky').locator('[data-testid=alert-redeliver]');
    assert.equal(await button.isDisabled(), false);
    await button.click();
    const result = detail('flaky').locator('[data-testid=alert-redeliver-result]');
    await result.waitFor({ timeout: T });
    assert.match(await result.textContent(), new RegExp(`^Redelivered ${dead.size} events? from \\d+ dead letters?\\.$`));
    const again = flakyTaken.filter((e) => dead.has(e.index)).map((e) => e.index);
    assert.deepEqual([...again].sort((a, b) => a - b), [...dead].sort((a, b) => a - b), 'each dead-lettered event exactly once');
    await waitFor('no dead letters left', async () => (await row('flaky').locator('[data-testid=alert-dead]').textContent()) === '0', T);
    assert.equal(await button.isDisabled(), true);
    await page.locator('[data-testid=alert-sinks]').scrollIntoViewIfNeeded();
    await shot('settings-alerts-redelivered');
    assert.deepEqual(problems, []);
  });
});
