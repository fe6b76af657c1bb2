// Witnesses in the browser (issue 43), against a REAL gateway cosigned by three
// REAL `interlock witness serve` processes (witness.mjs): the Log view shows
// each witness's newest cosignature verified in the browser against its key;
// a bundle dropped with the witness keys and K = 2 verifies, as the CLI
// (`interlock receipts verify --witness … --min-witnesses 2`) verifies it; a
// copy with one byte of a cosignature edited (its name, key id, time or
// signature) fails in both. A cosignature altered on its way from the API is
// shown as an error, and a gateway without witnesses says how to add one.
//
// Run through `scripts/ui.sh test`. Screenshots: ui/test-results/screenshots/.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { interlockBin, waitFor, screenshotsDir } from './harness.mjs';
import { exportBundle, waitUntilCosigned, witnessedGateway } from './witness.mjs';
import { launch } from './browser.mjs';

const run = promisify(execFile);
const shots = screenshotsDir;
const T = 30_000;
const NAMES = ['w1.test/witness', 'w2.test/witness', 'w3.test/witness'];

let gw;
let witnesses = [];
let browser;
let page;
let bundleText;
const problems = [];

async function newPage(viewport = { width: 1280, height: 900 }, colorScheme = 'light') {
  const ctx = await browser.newContext({ viewport, deviceScaleFactor: 1, colorScheme, timezoneId: 'Europe/Berlin' });
  const p = await ctx.newPage();
  p.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  p.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await p.addInitScript((key) => localStorage.setItem('interlock.apiKey', key), gw.reviewerKey);
  return p;
}

/** A screenshot of the element `sel`, or of the page. */
async function shot(p, name, sel) {
  await p.evaluate(() => document.fonts.ready);
  await p.evaluate(() => document.querySelector('.toasts')?.setAttribute('style', 'visibility:hidden'));
  const file = path.join(shots, `${name}.png`);
  if (sel) await p.locator(sel).screenshot({ path: file });
  else await p.screenshot({ path: file, fullPage: true });
}

/** `interlock receipts verify --json` with the witness keys and K (exit 1 prints the report too). */
async function cliVerify(file, keys, k) {
  const args = ['receipts', 'verify', file, '--json', ...keys.flatMap((v) => ['--witness', v]), ...(keys.length ? ['--min-witnesses', String(k)] : [])];
  try {
    const { stdout } = await run(interlockBin(), args, { env: gw.env, maxBuffer: 64 << 20 });
    return JSON.parse(stdout);
  } catch (e) {
    if (e.code === 1 && e.stdout) return JSON.parse(e.stdout);
    throw e;
  }
}

/** Drops a file on the window, as a user dragging it from a file manager does. */
async function drop(p, name, text) {
  await p.evaluate(
    ([n, t]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([t], n, { type: 'application/json' }));
      document.body.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    [name, text],
  );
}

/** Drops `text` as `name` and waits for its result (by file name). */
async function dropAndRead(p, name, text) {
  await drop(p, name, text);
  await p.waitForFunction((n) => document.querySelector('[data-testid=bundle-result]')?.textContent?.includes(n), name, { timeout: T });
  return {
    ok: await p.getAttribute('[data-testid=bundle-result]', 'data-ok'),
    counts: (await p.textContent('[data-testid=bundle-counts]')).trim(),
    witnesses: await p.$$eval('[data-testid=bundle-witness]', (ls) => ls.map((l) => [l.dataset.name, l.dataset.verdict])),
    problems: (await p.locator('[data-testid=bundle-problems]').count()) ? await p.textContent('[data-testid=bundle-problems]') : '',
  };
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  const [b, w] = await Promise.all([launch(), witnessedGateway(NAMES, ['calm'])]);
  browser = b;
  gw = w.gw;
  witnesses = w.witnesses;
  // A bundle whose latest checkpoint carries all three cosignatures.
  const out = path.join(gw.dir, 'bundle');
  bundleText = await waitFor(
    'a bundle cosigned by all three witnesses',
    async () => {
      const text = await exportBundle(gw, out);
      const cp = JSON.parse(text).checkpoint;
      return NAMES.every((n) => cp.includes(`\u2014 ${n} `)) ? text : null;
    },
    60_000,
    300,
  );
  fs.writeFileSync(path.join(gw.dir, 'bundle.json'), bundleText);
});

after(async () => {
  await browser?.close();
  await Promise.all(witnesses.map((w) => w.stop()));
  await gw?.stop();
});

describe('witnesses: the Log view and the bundle verifier', () => {
  it('shows each witness verified in the browser: the size it cosigned, when, and that it is up to date', async () => {
    const seen = await waitUntilCosigned(gw, 3);
    page = await newPage();
    // Opening the page may itself add a leaf (a reviewer key), which the
    // witnesses then cosign (no event announces a cosignature): look again
    // until all three are verified and caught up.
    const caughtUp = () =>
      page.waitForFunction(
        () =>
          [...document.querySelectorAll('[data-testid=witness-row][data-state=ok]')].filter(
            (r) => r.querySelector('[data-testid=witness-behind]')?.textContent === 'up to date',
          ).length === 3,
        null,
        { timeout: 2000 },
      );
    const deadline = Date.now() + T;
    for (;;) {
      await page.goto(gw.base + '/#/log');
      try {
        await caughtUp();
        break;
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await page.goto('about:blank');
      }
    }
    const rows = await page.$$eval('[data-testid=witness-row]', (rs) =>
      rs.map((r) => ({ name: r.dataset.name, what: r.querySelector('[data-testid=witness-what]').textContent, behind: r.querySelector('[data-testid=witness-behind]').textContent })),
    );
    assert.deepEqual(
      rows.map((r) => r.name),
      NAMES,
    );
    for (const r of rows) {
      // The browser runs in Europe/Berlin: the time carries its offset.
      const m = r.what.match(/^cosigned size (\d+) at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+01:00$/);
      assert.ok(m && Number(m[1]) >= seen.size, r.what);
      assert.equal(r.behind, 'up to date');
    }
    assert.equal((await page.textContent('[data-testid=witnesses-summary]')).trim(), '3 of 3 verified in this browser');
    for (const [w, h] of [
      [1280, 900],
      [390, 844],
    ])
      for (const scheme of ['light', 'dark']) {
        const p = await newPage({ width: w, height: h }, scheme);
        await p.goto(gw.base + '/#/log');
        await p.waitForFunction(() => document.querySelectorAll('[data-testid=witness-row][data-state=ok]').length === 3, null, { timeout: T });
        await shot(p, `witnesses-log-${w}-${scheme}`, '[data-testid=witnesses]');
        if (w === 390) assert.ok(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scroll at 390');
        await p.context().close();
      }
  });

  it('shows a cosignature altered on its way from the API as an error, and entries behind', async () => {
    const p = await newPage();
    await p.route('**/api/v1/log/witnesses', async (route) => {
      const r = await route.fetch();
      const body = await r.json();
      // w2: one byte of its signature changed; w3: its checkpoint said to be older.
      const line = body.witnesses[1].cosigned.line;
      const b64 = line.trim().split(' ')[2];
      const raw = Buffer.from(b64, 'base64');
      raw[40] ^= 1;
      body.witnesses[1].cosigned.line = line.replace(b64, raw.toString('base64'));
      body.size += 3;
      body.witnesses[2].cosigned = null;
      await route.fulfill({ response: r, json: body });
    });
    await p.goto(gw.base + '/#/log');
    await p.locator('[data-testid=witness-row][data-state=bad]').waitFor({ timeout: T });
    const state = await p.$$eval('[data-testid=witness-row]', (rs) => rs.map((r) => [r.dataset.name, r.dataset.state, r.textContent]));
    assert.equal(state[0][1], 'ok');
    assert.match(state[0][2], /3 entries behind/);
    assert.equal(state[1][1], 'bad');
    assert.match(state[1][2], /Not verified: The cosignature does not verify with w2\.test\/witness’s key/);
    assert.equal(state[2][1], 'none');
    assert.match(state[2][2], /no cosignature yet/);
    assert.match(await p.textContent('[data-testid=witnesses-summary]'), /1 of 3 verified in this browser, 1 failed/);
    await shot(p, 'witnesses-log-failed-1280-light', '[data-testid=witnesses]');
    // No witness configured: a short line on how to add one.
    await p.unroute('**/api/v1/log/witnesses');
    await p.route('**/api/v1/log/witnesses', (route) => route.fulfill({ json: { origin: 'x', size: 1, witnesses: [] } }));
    await p.goto(gw.base + '/#/receipts');
    await p.goto(gw.base + '/#/log');
    await p.locator('[data-testid=witnesses-none]').waitFor({ timeout: T });
    assert.match(await p.textContent('[data-testid=witnesses-none]'), /\[log\] witnesses.*gateway\.toml|gateway\.toml.*\[log\] witnesses/s);
    assert.match(await p.textContent('[data-testid=witnesses-none]'), /interlock witness serve/);
    await shot(p, 'witnesses-log-none-1280-light', '[data-testid=witnesses]');
    await p.context().close();
    const narrow = await newPage({ width: 390, height: 844 }, 'dark');
    await narrow.route('**/api/v1/log/witnesses', (route) => route.fulfill({ json: { origin: 'x', size: 1, witnesses: [] } }));
    await narrow.goto(gw.base + '/#/log');
    await narrow.locator('[data-testid=witnesses-none]').waitFor({ timeout: T });
    assert.ok(await narrow.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scroll at 390');
    await shot(narrow, 'witnesses-log-none-390-dark', '[data-testid=witnesses]');
    await narrow.context().close();
  });

  it('verifies a dropped bundle with the witness keys and K = 2, as the CLI does', async () => {
    const file = path.join(gw.dir, 'bundle.json');
    const keys = witnesses.map((w) => w.vkey);
    const cli = await cliVerify(file, keys, 2);
    assert.equal(cli.ok, true, JSON.stringify(cli.problems));
    await page.goto(gw.base + '/#/receipts');
    await page.locator('[data-testid=witness-keys]').waitFor({ timeout: T });
    await page.fill('[data-testid=witness-keys]', keys.join('\n'));
    await page.fill('[data-testid=min-witnesses]', '2');
    const r = await dropAndRead(page, 'bundle.json', bundleText);
    assert.equal(r.ok, 'true', `${r.counts} ${r.problems}`);
    assert.equal(r.counts, `${cli.receipts.length} receipts, 0 failed, 0 bundle problems`);
    assert.deepEqual(
      r.witnesses,
      NAMES.map((n) => [n, 'cosigned']),
    );
    assert.deepEqual(
      cli.witnesses.map((w) => [w.name, w.cosigned_at !== null]),
      NAMES.map((n) => [n, true]),
    );
    assert.match(await page.textContent('[data-testid=bundle-witness-count]'), /3 of 3 witnesses given cosigned the latest checkpoint; at least 2 required/);
    await shot(page, 'witnesses-bundle-verified-1280-light', '[data-testid=bundle-drop]');
    // Four required of three: both refuse it.
    await page.fill('[data-testid=min-witnesses]', '4');
    const four = await dropAndRead(page, 'bundle-k4.json', bundleText);
    assert.equal(four.ok, 'false');
    assert.match(four.problems, /cosigned by 3 of the witnesses given; at least 4 required/);
    assert.equal((await cliVerify(file, keys, 4)).ok, false);
    // Two keys given: the third witness's line is a cosigner whose key was not given.
    await page.fill('[data-testid=witness-keys]', keys.slice(0, 2).join('\n'));
    await page.fill('[data-testid=min-witnesses]', '2');
    const two = await dropAndRead(page, 'bundle-two-keys.json', bundleText);
    assert.equal(two.ok, 'false');
    assert.match(two.problems, /UnknownCosigner.*w3\.test\/witness, whose key was not given/s);
    assert.equal((await cliVerify(file, keys.slice(0, 2), 2)).ok, false);
    await page.fill('[data-testid=witness-keys]', keys.join('\n'));
  });

  it('fails a bundle with one byte of a cosignature edited (name, key id, time, signature), as the CLI does', async () => {
    const bundle = JSON.parse(bundleText);
    const cp = bundle.checkpoint;
    const keys = witnesses.map((w) => w.vkey);
    const start = cp.indexOf(`\u2014 ${NAMES[1]} `);
    const b64 = start + '\u2014 '.length + NAMES[1].length + 1;
    const end = start + cp.slice(start).indexOf('\n');
    const positions = {
      name: start + '\u2014 '.length + 1,
      'key id': b64 + 2,
      time: b64 + 10,
      signature: b64 + 40,
      "signature's end": end - 4,
    };
    for (const [what, at] of Object.entries(positions)) {
      const edited = cp.slice(0, at) + (cp[at] === 'A' ? 'B' : 'A') + cp.slice(at + 1);
      const text = JSON.stringify({ ...bundle, checkpoint: edited });
      const file = path.join(gw.dir, `edited-${what.replace(/\W/g, '-')}.json`);
      fs.writeFileSync(file, text);
      const cli = await cliVerify(file, keys, 2);
      assert.equal(cli.ok, false, `${what}: the CLI refuses it`);
      const r = await dropAndRead(page, path.basename(file), text);
      assert.equal(r.ok, 'false', `${what}: ${r.counts}`);
      assert.equal(r.counts, `${cli.receipts.length} receipts, ${cli.receipts.filter((x) => !x.ok).length} failed, ${cli.problems.length} bundle problems`, what);
      const w2 = r.witnesses.find(([n]) => n === NAMES[1]);
      assert.notEqual(w2?.[1], 'cosigned', `${what}: w2 is not counted`);
      if (what === 'signature') await shot(page, 'witnesses-bundle-edited-1280-light', '[data-testid=bundle-drop]');
    }
  });

  it('shows the bundle verifier’s witness verdicts at 390 px and in dark mode', async () => {
    const keys = witnesses.map((w) => w.vkey).join('\n');
    for (const [w, h, scheme] of [
      [390, 844, 'light'],
      [390, 844, 'dark'],
      [1280, 900, 'dark'],
    ]) {
      const p = await newPage({ width: w, height: h }, scheme);
      await p.goto(gw.base + '/#/receipts');
      await p.locator('[data-testid=witness-keys]').waitFor({ timeout: T });
      await p.fill('[data-testid=witness-keys]', keys);
      await p.fill('[data-testid=min-witnesses]', '2');
      const r = await dropAndRead(p, 'bundle.json', bundleText);
      assert.equal(r.ok, 'true', r.counts);
      if (w === 390) assert.ok(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scroll at 390');
      await shot(p, `witnesses-bundle-verified-${w}-${scheme}`, '[data-testid=bundle-drop]');
      await p.context().close();
    }
  });

  it('logged no console errors', () => {
    assert.deepEqual(problems, []);
  });
});
