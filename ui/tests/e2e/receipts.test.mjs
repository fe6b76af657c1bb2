// The auditor's path through the receipts view (issue 18), against a REAL
// gateway: filter a week of receipts, read one, export the selection from the
// window, drop the bundle back and see it verified in the browser — and the
// CLI (`interlock receipts verify`) verifies the same bundle identically, a
// tampered copy included. Times the in-browser verification of a
// 10,000-receipt bundle when scripts/bundle-fixtures.sh has written one.
//
// Run through `scripts/ui.sh test`. Screenshots: ui/test-results/screenshots/.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Gateway, interlockBin, uiDir, waitFor, screenshotsDir } from './harness.mjs';

const run = promisify(execFile);
import { launch } from './browser.mjs';

const shots = screenshotsDir;
const T = 30_000;

let gw;
let browser;
let page;
let work;
const problems = [];

async function shot(name) {
  await page.evaluate(() => document.fonts.ready);
  await page.evaluate(() => document.querySelector('.toasts')?.setAttribute('style', 'visibility:hidden'));
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  await page.evaluate(() => document.querySelector('.toasts')?.removeAttribute('style'));
}

/** What `interlock receipts verify --json` says of a bundle file (exit 1 prints it too). */
async function cliVerify(file, logKey) {
  const args = ['receipts', 'verify', file, '--json', ...(logKey ? ['--log-key', logKey] : [])];
  try {
    const { stdout } = await run(interlockBin(), args, { env: gw.env, maxBuffer: 64 << 20 });
    return JSON.parse(stdout);
  } catch (e) {
    if (e.code === 1 && e.stdout) return JSON.parse(e.stdout);
    throw e;
  }
}

/** One JSON-RPC request to /mcp with an agent key. */
async function call(key, method, params) {
  const r = await fetch(gw.base + '/mcp', {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await r.json();
  if (r.status !== 200 || body.error) throw new Error(`${method}: ${r.status} ${JSON.stringify(body)}`);
  return body.result;
}

/** Drops a file on the window, as a user dragging it from a file manager does. */
async function drop(name, text) {
  await page.evaluate(
    ([n, t]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([t], n, { type: 'application/json' }));
      document.body.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    [name, text],
  );
}

async function result() {
  await page.locator('[data-testid=bundle-result]').waitFor({ timeout: T * 4 });
  return {
    ok: await page.getAttribute('[data-testid=bundle-result]', 'data-ok'),
    counts: (await page.textContent('[data-testid=bundle-counts]')).trim(),
  };
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  gw = new Gateway();
  work = path.join(gw.dir, 'downloads');
  fs.mkdirSync(work);
  const [b] = await Promise.all([launch(), gw.start({ servers: ['drifty', 'calm'] })]);
  browser = b;
  // Receipts to find: servers pending then approved, plans proposed and decided.
  await gw.waitServer('drifty', (s) => s.status === 'PENDING', 'PENDING');
  await gw.waitServer('calm', (s) => s.status === 'PENDING', 'PENDING');
  await gw.approveServer('drifty');
  await gw.approveServer('calm');
  await gw.waitServer('calm', (s) => s.status === 'TRUSTED', 'TRUSTED');
  // Tool calls for the overview: allowed and blocked (a secret in the
  // arguments) from `builder`; the same from a shadow-mode agent, whose
  // blocked call only would have been.
  const shadowKey = (await gw.cli('agents', 'add', 'shadowy', '--shadow')).trim();
  await waitFor('calm__add served', async () => (await call(gw.agentKey, 'tools/list', {})).tools.some((t) => t.name === 'calm__add'));
  for (const key of [gw.agentKey, shadowKey]) {
    for (let i = 0; i < 3; i++) await call(key, 'tools/call', { name: 'calm__add', arguments: { a: i, b: 1 } });
    await call(key, 'tools/call', { name: 'calm__greet', arguments: { name: 'AKIAIOSFODNN7EXAMPLE' } });
  }
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1, acceptDownloads: true });
  page = await ctx.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.addInitScript((key) => localStorage.setItem('interlock.apiKey', key), gw.reviewerKey);
  await page.goto(gw.base + '/#/receipts');
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

describe('receipts: find, read, export, verify', () => {
  it('filters a week of receipts and reads one decoded', async () => {
    await page.click('[data-preset="7d"]');
    await page.locator('[data-testid=receipt-row]').first().waitFor({ timeout: T });
    const all = await page.locator('[data-testid=receipt-row]').count();
    assert.ok(all >= 4, `${all} receipts`);
    // One event type: every row shown is of it.
    await page.selectOption('[data-testid=filter-event]', 'server.approved');
    await page.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll('[data-testid=receipt-row] [data-testid=row-event]')];
        return rows.length > 0 && rows.every((r) => r.textContent === 'server.approved');
      },
      null,
      { timeout: T },
    );
    assert.equal(await page.locator('[data-testid=receipt-row]').count(), 2);
    await page.locator('[data-testid=receipt-row]').first().click();
    await page.locator('[data-testid=receipt-approver]').waitFor({ timeout: T });
    assert.match(await page.textContent('[data-testid=receipt-approver]'), /cli-reviewer/);
    assert.match(await page.textContent('[data-testid=receipt-hash]'), /sha256:/);
    // The raw forms one click away, decoded: the statement, the stored leaf.
    await page.click('[data-testid=show-statement]');
    assert.match(await page.textContent('[data-testid=receipt-raw]'), /"type": "server.approved"/);
    await page.click('[data-testid=show-leaf]');
    await page.waitForFunction(() => /in-toto\.io\/Statement\/v1/.test(document.querySelector('[data-testid=receipt-raw]')?.textContent ?? ''), null, {
      timeout: T,
    });
    await shot('receipts-detail');
    // Its tlog-proof downloads, and the CLI verifies it with the log key.
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=download-tlog-proof]')]);
    assert.match(dl.suggestedFilename(), /^receipt-\d+\.tlog-proof$/);
    const proof = path.join(work, dl.suggestedFilename());
    await dl.saveAs(proof);
    const cp = await gw.api('/api/v1/log/checkpoint');
    await gw.cli('receipts', 'verify', proof, '--log-key', cp.verifier_key);
    await page.selectOption('[data-testid=filter-event]', '');
  });

  it('exports the week, drops the bundle back and sees it verified, as the CLI does', async () => {
    await page.locator('[data-testid=receipt-row]').nth(3).waitFor({ timeout: T });
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=export]')]);
    assert.equal(dl.suggestedFilename(), 'bundle.json');
    const file = path.join(work, 'bundle.json');
    await dl.saveAs(file);
    await page.locator('[data-testid=export-result]').waitFor({ timeout: T });
    for (const f of ['report.html', 'summary.csv']) await page.locator(`[data-testid="download-${f}"]`).waitFor({ timeout: T });
    await shot('receipts-exported');
    const cp = await gw.api('/api/v1/log/checkpoint');
    const cli = await cliVerify(file, cp.verifier_key);
    assert.equal(cli.ok, true, JSON.stringify(cli));

    await drop('bundle.json', fs.readFileSync(file, 'utf8'));
    const r = await result();
    assert.equal(r.ok, 'true', r.counts);
    assert.equal(r.counts, `${cli.receipts.length} receipts, 0 failed, 0 bundle problems`);
    await shot('receipts-bundle-verified');

    // One digit of one receipt's time changed: both refuse it, with the same counts.
    const text = fs.readFileSync(file, 'utf8');
    const at = text.indexOf('"time":', text.indexOf('"receipts":')) + '"time":'.length + 5;
    const tampered = text.slice(0, at) + (text[at] === '1' ? '2' : '1') + text.slice(at + 1);
    const bad = path.join(work, 'tampered.json');
    fs.writeFileSync(bad, tampered);
    const cliBad = await cliVerify(bad, cp.verifier_key);
    assert.equal(cliBad.ok, false);
    await page.setInputFiles('[data-testid=bundle-file]', bad);
    await page.waitForFunction(() => document.querySelector('[data-testid=bundle-result]')?.getAttribute('data-ok') === 'false', null, {
      timeout: T,
    });
    const failed = cliBad.receipts.filter((x) => !x.ok).length;
    assert.equal(
      (await page.textContent('[data-testid=bundle-counts]')).trim(),
      `${cliBad.receipts.length} receipts, ${failed} failed, ${cliBad.problems.length} bundle problems`,
    );
    await shot('receipts-bundle-tampered');
  });

  it('verifies a 10,000-receipt bundle in the browser (timed)', async (t) => {
    const big = path.join(uiDir, 'test-results/large/bundle-10000.json');
    if (!fs.existsSync(big)) return t.skip('no 10,000-receipt bundle: run scripts/bundle-fixtures.sh');
    await page.fill('[data-testid=pinned-key]', '');
    const started = Date.now();
    await page.setInputFiles('[data-testid=bundle-file]', big);
    await page.waitForFunction(() => /bundle-10000\.json/.test(document.querySelector('[data-testid=bundle-result]')?.textContent ?? ''), null, {
      timeout: 600_000,
    });
    const r = await result();
    const line = await page.textContent('[data-testid=bundle-result] .faint');
    console.log(`# in-browser verification of 10,000 receipts: ${line.split('·').pop().trim()} (${((Date.now() - started) / 1000).toFixed(1)} s with file reading)`);
    assert.equal(r.ok, 'true', r.counts);
    assert.equal(r.counts, '10000 receipts, 0 failed, 0 bundle problems');
  });

  it('shows the overview: what waits, today, calls over time, the shadow would-block rate', async () => {
    // The shortcut, from the page (not from a text field, which keeps its keys).
    await page.evaluate(() => document.activeElement?.blur?.());
    await page.keyboard.press('g');
    await page.keyboard.press('o');
    await page.locator('[data-testid=agent-row]').first().waitFor({ timeout: T });
    assert.equal((await page.textContent('[data-testid=stat-calls]')).trim(), '8');
    assert.equal(Number(await page.textContent('[data-testid=stat-decided]')), 2, 'two servers approved today');
    const rows = await page.$$eval('[data-testid=agent-row]', (rs) => rs.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent.trim())));
    const byName = Object.fromEntries(rows.map((r) => [r[0], r]));
    assert.deepEqual(byName.builder.slice(1, 5), ['4', '0', '1', '0'], JSON.stringify(rows));
    assert.deepEqual(byName.shadowy.slice(1, 5), ['4', '0', '0', '4'], JSON.stringify(rows));
    assert.match(byName.shadowy[5], /25 %/);
    // The charts drew (uPlot's canvas), at a fixed height.
    await page.locator('[data-testid=chart-all] canvas').waitFor({ timeout: T });
    assert.equal(await page.locator('.chart canvas').count(), 4);
    await shot('overview');
  });

  it('logged no console errors', () => {
    assert.deepEqual(problems, []);
  });
});
