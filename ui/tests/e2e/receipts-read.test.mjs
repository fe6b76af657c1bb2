// Receipts an auditor reads without a developer (issue 46 item 3), against a
// REAL gateway: a rejected plan's receipt says Rejected, who decided by name
// (not a key id), when with its timezone and why; a statement's Unix times
// carry their date; a tool call's intent and outcome leaves are one row
// (expandable to both); no row repeats its event type or is cut off; the
// plan's Decisions so far name the approver; and the print stylesheet leaves
// a clean report (no navigation, no buttons, every row in full).
//
// The browser runs in Europe/Berlin, so local times carry "UTC+01:00".
// Screenshots (1280 and 390, light and dark, and print):
// ui/test-results/screenshots/issue46-receipts-*.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Gateway, plan, waitFor, screenshotsDir } from './harness.mjs';
import { launch, reviewerPage } from './browser.mjs';

const shots = screenshotsDir;
const T = 30_000;
const ZONED = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+01:00$/;

let gw;
let browser;
let page;
let receipts;
const problems = [];

/** Unix seconds as Berlin local time, as the UI should print it (December: UTC+01:00). */
function berlin(unix) {
  const f = new Intl.DateTimeFormat('sv-SE', {
    timeZone: 'Europe/Berlin',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  });
  return `${f.format(new Date(unix * 1000))} UTC+01:00`;
}

async function shot(name, opts = {}) {
  await page.evaluate(() => document.fonts.ready);
  await page.evaluate(() => document.querySelector('.toasts')?.setAttribute('style', 'visibility:hidden'));
  await page.screenshot({ path: path.join(shots, `issue46-receipts-${name}.png`), fullPage: true, ...opts });
  await page.evaluate(() => document.querySelector('.toasts')?.removeAttribute('style'));
}

async function rows() {
  return page.$$eval('[data-testid=receipt-row]', (rs) =>
    rs.map((r) => ({
      kind: r.dataset.kind,
      leaves: r.dataset.leaves,
      text: r.innerText,
      title: r.title,
      verdict: r.querySelector('[data-testid=row-verdict]')?.textContent.trim(),
      who: r.querySelector('[data-testid=row-who]')?.textContent.trim(),
      time: r.querySelector('[data-testid=row-time]')?.textContent.trim(),
      why: r.querySelector('[data-testid=row-why]')?.textContent.trim() ?? '',
      event: r.querySelector('[data-testid=row-event]')?.textContent.trim(),
    })),
  );
}

async function showAll() {
  await page.selectOption('[data-testid=filter-event]', '');
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=receipt-row]').length === n, receipts.length - intents(), { timeout: T });
}

/** How many tool calls have both leaves in the log (each is one row). */
function intents() {
  const outcomes = new Set(receipts.filter((r) => r.kind === 'tool.call').map((r) => r.predicate.call_id));
  return receipts.filter((r) => r.kind === 'tool.call.intent' && outcomes.has(r.predicate.call_id)).length;
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  gw = new Gateway();
  const [b] = await Promise.all([launch(), gw.start({ servers: ['calm'] })]);
  browser = b;
  await gw.waitServer('calm', (s) => s.status === 'PENDING', 'PENDING');
  await gw.approveServer('calm');
  await gw.waitServer('calm', (s) => s.status === 'TRUSTED', 'TRUSTED');
  await waitFor('calm__add served', async () => (await gw.rpc('tools/list', {})).tools.some((t) => t.name === 'calm__add'));
  // Two allowed calls (intent and outcome leaves each), one blocked (a secret: never forwarded).
  await gw.rpc('tools/call', { name: 'calm__add', arguments: { a: 1, b: 2 } });
  await gw.rpc('tools/call', { name: 'calm__add', arguments: { a: 3, b: 4 } });
  await gw.rpc('tools/call', { name: 'calm__greet', arguments: { name: 'AKIAIOSFODNN7EXAMPLE' } });
  const cmd = {
    id: 'restart',
    action: 'cmd.run',
    target: 'systemctl',
    params: { argv: ['systemctl', 'restart', 'web'], timeout_ms: 30000 },
    preconditions: [{ probe: 'cmd.exit_code', params: { argv: ['true'], code: 0 }, description: 'The host answers.' }],
    verify: [{ probe: 'cmd.exit_code', params: { argv: ['true'], code: 0 } }],
    rollback: 'Restart it again by hand.',
  };
  await gw.propose(plan('restart-web', 'Restart the web tier', [cmd]));
  await gw.cli('plans', 'reject', 'restart-web', '--reason', 'Not during business hours: wait for the change window.');
  receipts = (await gw.api('/api/v1/receipts?limit=500')).receipts;
  page = await reviewerPage(browser, gw.reviewerKey, problems, { 'interlock.receiptsPreset': 'all' });
  await page.goto(gw.base + '/#/receipts');
  await page.locator('[data-testid=receipt-row]').first().waitFor({ timeout: T });
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

describe('receipts an auditor reads (issue 46 item 3)', () => {
  it("a rejected plan's receipt says Rejected, by human:cli-reviewer, when (with its timezone) and why", async () => {
    const decision = receipts.find((r) => r.kind === 'plan.decision');
    assert.equal(decision.verdict, 'rejected', "the API's summary says a plan decision's verdict");
    await page.selectOption('[data-testid=filter-event]', 'plan.decision');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=receipt-row]').length === 1, null, { timeout: T });
    const [row] = await rows();
    assert.equal(row.verdict, 'Rejected');
    assert.equal(row.who, 'human:cli-reviewer');
    assert.match(row.time, ZONED);
    assert.equal(row.time, berlin(decision.time));
    assert.equal(row.why, '“Not during business hours: wait for the change window.”');
    assert.match(row.text, /decided on plan restart-web r1/);
    assert.doesNotMatch(row.text, /ed25519:/);

    await page.locator('[data-testid=receipt-row]').first().click();
    await page.locator('[data-testid=receipt-verdict]').waitFor({ timeout: T });
    assert.equal((await page.textContent('[data-testid=receipt-verdict]')).trim(), 'Rejected');
    assert.match(await page.textContent('[data-testid=receipt-approver]'), /^human:cli-reviewer · signed with ed25519:[0-9a-f]{64}$/);
    assert.match(await page.textContent('[data-testid=receipt-when]'), new RegExp(`^${berlin(decision.time).replace('+', '\\+')} \\(`));
    assert.equal((await page.textContent('[data-testid=receipt-why]')).trim(), 'Not during business hours: wait for the change window.');
    assert.equal((await page.textContent('[data-testid=receipt-subject]')).trim(), 'plan restart-web r1');
    // The statement's Unix times carry their date.
    await page.click('[data-testid=show-statement]');
    const statement = await page.textContent('[data-testid=receipt-raw]');
    assert.match(statement, /"expires_at": \d+,\s+\/\/ \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+01:00/);
    assert.match(statement, /"issued_at": \d+,\s+\/\/ .* UTC\+01:00/);
    assert.match(statement, /"decision": "reject"/);
    await shot('plan-decision-1280-light');
  });

  it("one row per tool call: its intent and outcome leaves, expandable to both", async () => {
    await showAll();
    const list = await rows();
    const calls = receipts.filter((r) => r.kind === 'tool.call');
    assert.equal(calls.length, 3);
    assert.equal(intents(), 2, 'two calls were forwarded: two intent leaves');
    // Every call once; no intent leaf has a row of its own.
    assert.equal(list.filter((r) => r.kind === 'tool.call').length, 3);
    assert.equal(list.filter((r) => r.kind === 'tool.call.intent').length, 0);
    const joined = list.filter((r) => r.leaves.split(' ').length === 2);
    assert.equal(joined.length, 2);
    for (const r of joined) {
      assert.equal(r.verdict, 'Allowed');
      assert.equal(r.who, "the gateway's policy");
      assert.equal(r.event, 'tool call');
      assert.match(r.text, /agent builder called calm\/add/);
    }
    const blocked = list.find((r) => r.verdict === 'Blocked');
    assert.match(blocked.why, /looks like a secret/);
    // Expanded: both leaves, each opening its own receipt.
    const row = page.locator('[data-testid=receipt-row][data-kind="tool.call"][data-leaves*=" "]').first();
    await row.locator('[data-testid=row-leaves-toggle]').click();
    const leaves = page.locator('[data-testid=receipt-leaf-row]');
    assert.equal(await leaves.count(), 2);
    assert.match(await leaves.nth(0).innerText(), /tool\.call\s+outcome · Allowed/);
    assert.match(await leaves.nth(1).innerText(), /tool\.call\.intent\s+intent: recorded before the call was forwarded · Allowed · forwarding/);
    await leaves.nth(1).click();
    await page.waitForFunction(() => /Receipt #\d+/.test(document.querySelector('#receipt-pane h3')?.textContent ?? ''), null, { timeout: T });
    assert.equal((await page.textContent('[data-testid=receipt-verdict]')).trim(), 'Allowed · forwarding');
    assert.equal(await page.locator('[data-testid=leaf-tab]').count(), 2);
    await shot('tool-call-1280-light');
  });

  it('no row repeats its event type, names a key id or is cut off', async () => {
    await showAll();
    for (const r of await rows()) {
      assert.doesNotMatch(r.text, /(\b[a-z]+\.[a-z_.]+) · \1/, r.text);
      assert.doesNotMatch(r.text, /ed25519:[0-9a-f]{6}/, r.text);
      assert.match(r.time, ZONED, r.text);
      assert.ok(r.verdict && r.who, r.text);
      // The whole line is in the row's title too.
      assert.ok(r.title.includes(r.verdict) && r.title.includes(r.time), r.title);
    }
    const issued = (await rows()).filter((r) => r.kind === 'apikey.issued');
    assert.deepEqual(
      issued.map((r) => r.text.split('\n').find((l) => l.startsWith('issued'))),
      ['issued reviewer key ui-tests (role reviewer)', 'issued agent key builder (role default)'],
    );
    // Nothing clipped: every row's text fits its box, at 1280 and at 390.
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      const clipped = await page.$$eval('[data-testid=receipt-row] .subj, [data-testid=receipt-row] .chip', (els) =>
        els.filter((e) => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1).map((e) => e.textContent),
      );
      assert.deepEqual(clipped, [], `clipped at ${width}`);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `no sideways scroll at ${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('screenshots at 1280 and 390, light and dark', async () => {
    await showAll();
    await page.locator('[data-testid=receipt-row][data-kind="plan.decision"]').click();
    for (const [width, height] of [
      [1280, 900],
      [390, 844],
    ]) {
      await page.setViewportSize({ width, height });
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: scheme });
        await shot(`${width}-${scheme}`, { fullPage: false });
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('prints as a clean report: no navigation, no buttons, every row in full; or one receipt alone', async () => {
    await showAll();
    await page.emulateMedia({ media: 'print', colorScheme: 'dark' });
    const seen = (sel) => page.$$eval(sel, (els) => els.filter((e) => e.getClientRects().length > 0).length);
    assert.equal(await seen('.sidebar'), 0);
    assert.equal(await seen('.receipts-page button'), 0);
    assert.equal(await seen('.receipt-filters, .filters'), 0);
    assert.equal(await seen('[data-testid=bundle-drop]'), 0);
    assert.equal(await seen('#receipt-pane'), 0, 'the list alone');
    assert.equal(await seen('[data-testid=receipt-row]'), receipts.length - intents());
    assert.match(await page.textContent('[data-testid=print-meta]'), /Time: All time · \d+ rows \(\d+ receipts\) · printed .* UTC\+01:00/);
    assert.equal(await seen('[data-testid=print-meta]'), 1);
    // Printed in light colours whatever the screen's scheme.
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(255, 255, 255)');
    await shot('print-list');
    // One receipt: the list left out, the receipt in full.
    await page.evaluate(() => document.body.classList.add('print-one'));
    assert.equal(await seen('.receipts-col'), 0);
    assert.equal(await seen('#receipt-pane'), 1);
    assert.equal(await seen('[data-testid=receipt-verdict]'), 1);
    await shot('print-one');
    await page.evaluate(() => document.body.classList.remove('print-one'));
    await page.emulateMedia({ media: 'screen', colorScheme: 'light' });
    // The buttons that print are there on screen.
    assert.equal(await seen('[data-testid=print]'), 1);
    assert.equal(await seen('[data-testid=print-one]'), 1);
  });

  it("the plan's Decisions so far name the approver, not the key id", async () => {
    await page.goto(gw.base + '/#/plans/restart-web');
    await page.locator('[data-testid=decision-by]').first().waitFor({ timeout: T });
    await page.waitForFunction(() => /human:cli-reviewer/.test(document.querySelector('[data-testid=decision-by]')?.textContent ?? ''), null, { timeout: T });
    assert.equal((await page.textContent('[data-testid=decision-by]')).trim(), 'by human:cli-reviewer');
    assert.doesNotMatch(await page.textContent('[data-testid=decisions]'), /ed25519:/);
  });

  it('logged no console errors', () => {
    assert.deepEqual(problems, []);
  });
});
