// Issue 18 item 2, in the browser against a REAL gateway: a reviewer approves
// a held tool call "for 1 hour" from its review, signing the plan and the
// standing approval the gateway offers with the browser's WebCrypto key; the
// agent's next calls of that tool run without a hold, each logged with the
// grant's id, and another agent's are still held.
//
// Run through `scripts/ui.sh test` (it builds the UI, sets up the peers and runs
// this under scripts/with-keyring). Screenshots: ui/test-results/screenshots/.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Gateway, waitFor, screenshotsDir } from './harness.mjs';
import { launch } from './browser.mjs';

const shots = screenshotsDir;
const T = 20_000;

// `odd` has no annotations, so its risk (high) is above the reader's limit:
// its calls are held for a reviewer.
const ROLES = '[calls]\nhold_secs = 1\n[roles.reader]\ntools = ["calm__*"]\nmax_risk = "low"\n';

let gw;
let browser;
let page;
let reader;
let other;
const problems = [];

async function until(what, fn, arg) {
  try {
    await page.waitForFunction(fn, arg, { timeout: T, polling: 100 });
  } catch (e) {
    throw new Error(`timed out: ${what}\n${e.message}`);
  }
}

// A held call's plan: a stateless (2026-07-28) call still waiting answers the
// round trip's `input_required`; one decided in time, a held tool error.
const heldPlan = (result) =>
  result.resultType === 'input_required'
    ? result._meta?.['io.interlock/held']?.plan_id ?? null
    : result.structuredContent?.held
      ? result.structuredContent.plan_id
      : null;
const callOdd = (key, args) => gw.rpc('tools/call', { name: 'calm__odd', arguments: args }, key);

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  gw = new Gateway();
  const [b] = await Promise.all([launch(), gw.start({ servers: ['calm'], extra: ROLES })]);
  browser = b;
  await gw.waitServer('calm', (s) => s.status === 'PENDING', 'PENDING');
  await gw.approveServer('calm');
  await gw.waitServer('calm', (s) => s.status === 'TRUSTED', 'TRUSTED');
  reader = (await gw.cli('agents', 'add', 'reader-bot', '--role', 'reader', '--config', gw.config)).trim();
  other = (await gw.cli('agents', 'add', 'other-bot', '--role', 'reader', '--config', gw.config)).trim();
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1 });
  page = await ctx.newPage();
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

describe('approvals that do not fatigue', () => {
  it('approves a held call for 1 hour from its review; the next calls run, each logged', async () => {
    // The browser becomes a reviewer: the API key, and its approver key registered.
    await page.goto(gw.base + '/#/settings');
    await page.locator('#api-key').waitFor({ timeout: T });
    await page.fill('#api-key', gw.reviewerKey);
    await page.click('[data-testid=save-key]');
    await page.locator('[data-testid=key-unregistered]').waitFor({ timeout: T });
    await page.fill('#identity', 'browser-reviewer');
    const command = (await page.textContent('[data-testid=register-command] code')).trim();
    const pk = /--public-key ([0-9a-f]{64})/.exec(command)[1];
    await gw.cli('keys', 'register', '--public-key', pk, '--identity', 'human:browser-reviewer');

    const held = await callOdd(reader, { n: 1 });
    const planId = heldPlan(held);
    assert.ok(planId, `held: ${JSON.stringify(held)}`);

    // Two more held calls of the same tool by the same agent: the inbox shows
    // the three as one group, opened with a click (or Enter).
    for (const n of [10, 11]) assert.ok(heldPlan(await callOdd(reader, { n })));
    await page.evaluate(() => (location.hash = '#/inbox'));
    const group = page.locator('[data-testid=group-row]');
    await group.waitFor({ timeout: T });
    assert.match(await group.textContent(), /3 calls of calm__odd by reader-bot/);
    assert.equal(await page.locator('[data-testid=row].member').count(), 0);
    await group.click();
    await until('three member rows', () => document.querySelectorAll('[data-testid=row].member').length === 3);
    const heights = await page.$$eval('[data-testid=inbox] .row', (rs) => rs.map((r) => r.getBoundingClientRect().height));
    assert.ok(heights.every((h) => h === heights[0]), `row heights ${heights}`);
    await page.screenshot({ path: path.join(shots, 'inbox-grouped-held-calls.png') });

    await page.evaluate((h) => (location.hash = h), `#/plans/${encodeURIComponent(planId)}`);
    // `a` opens the dialog once the plan has loaded (the button is enabled then).
    await page.locator('[data-testid=approve]:not([disabled])').waitFor({ timeout: T });
    await page.evaluate(() => document.activeElement?.blur?.());
    await page.keyboard.press('a');
    await page.locator('[role=dialog] [data-scope=hour]').waitFor({ timeout: T });
    const scopes = await page.$$eval('[role=dialog] [data-scope]', (ls) => ls.map((l) => l.getAttribute('data-scope')));
    assert.deepEqual(scopes, ['once', 'hour', 'arguments'], 'a stateless call has no session to offer');
    // Once is the default; the hour is a deliberate choice.
    assert.equal(await page.isChecked('[role=dialog] input[value=once]'), true);
    await page.check('[role=dialog] input[value=hour]');
    assert.match(await page.textContent('[role=dialog] [data-scope=hour]'), /reader-bot.*calm__odd.*1 hour/);
    await page.evaluate(() => document.querySelector('.toasts')?.setAttribute('style', 'visibility:hidden'));
    await page.screenshot({ path: path.join(shots, 'approve-for-an-hour.png') });
    await page.evaluate(() => document.querySelector('.toasts')?.removeAttribute('style'));
    // A high-risk call: the reason is the reviewer's own (issue 46).
    await page.fill('#reason', 'odd only reads; an hour of it is fine.');
    await page.click('[role=dialog] button[type=submit]');
    await page.locator('[role=dialog]').waitFor({ state: 'detached', timeout: T });

    const { standing } = await gw.api('/api/v1/standing');
    const grant = standing.find((s) => s.active && s.tool === 'calm__odd');
    assert.ok(grant, `a grant: ${JSON.stringify(standing)}`);
    assert.equal(grant.document.agent, 'reader-bot');
    assert.ok(grant.expires_at - Date.now() / 1000 <= 3600 && grant.expires_at - Date.now() / 1000 > 3500);
    const plan = await gw.api(`/api/v1/plans/${encodeURIComponent(planId)}`);
    assert.equal(plan.plan.status, 'APPROVED');

    // The next calls run without a hold, with other values.
    for (const n of [2, 3]) {
      const r = await callOdd(reader, { n });
      assert.equal(heldPlan(r), null, `call ${n} ran: ${JSON.stringify(r)}`);
    }
    // Each use is in the log, under the grant's id.
    const uses = await waitFor('two standing uses in the log', async () => {
      const { entries } = await gw.api('/api/v1/log?from=0&limit=1000');
      const u = entries.filter((e) => e.entry.type === 'tool.call' && e.entry.verdict?.verdict === 'standing_approval');
      return u.length === 2 ? u : null;
    });
    assert.ok(uses.every((u) => u.entry.verdict.standing_approval === grant.id));
    // Another agent of the same role is still held.
    assert.ok(heldPlan(await callOdd(other, { n: 4 })), 'another agent is held');

    // The grant is listed with who it is for, and can be revoked from there.
    await page.evaluate(() => (location.hash = '#/standing'));
    const row = page.locator(`[data-testid=standing] [data-key="${grant.id}"]`);
    await row.waitFor({ timeout: T });
    assert.match(await row.textContent(), /reader-bot.*calm__odd/);
    await page.screenshot({ path: path.join(shots, 'standing-agent-grant.png') });
    assert.deepEqual(problems, []);
  });

  it('accepts monitor-level drift on its servers in one decision, one statement each', async () => {
    // A mere rewording of greet: recorded as drift, nothing held, still served.
    fs.writeFileSync(gw.drift.calm, 'Greets a person, by name.');
    const drifted = await gw.waitServer(
      'calm',
      (s) => s.status === 'TRUSTED' && s.observed_hash !== s.baseline_hash && !(s.blocked_tools || []).length,
      'with monitored drift',
    );
    await page.evaluate(() => (location.hash = '#/servers'));
    const button = page.locator('[data-testid=accept-monitored]');
    await until('the button counts one server', () => /\(1\)/.test(document.querySelector('[data-testid=accept-monitored]')?.textContent ?? ''));
    await button.click();
    await page.locator('[data-testid=bulk-drift]').waitFor({ timeout: T });
    assert.match(await page.textContent('[data-testid=bulk-drift]'), /calm/);
    await page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished)));
    await page.screenshot({ path: path.join(shots, 'accept-monitored-drift.png') });
    await page.click('[data-testid=bulk-accept]');
    await page.locator('[role=dialog]').waitFor({ state: 'detached', timeout: T });
    const now = await gw.waitServer('calm', (s) => s.baseline_hash === drifted.observed_hash, 'the new baseline');
    assert.equal(now.status, 'TRUSTED');
    const { entries } = await gw.api('/api/v1/log?from=0&limit=1000');
    const approvals = entries.filter((e) => e.entry.type === 'server.approved' && e.entry.server === 'calm');
    assert.ok(approvals.length >= 2, 'the first approval, then the accepted drift');
    assert.deepEqual(problems, []);
  });
});
