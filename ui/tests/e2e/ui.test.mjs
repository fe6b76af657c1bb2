// Browser tests of the review UI against a REAL gateway: `interlock serve --ui
// ui/dist` with real upstream MCP servers (tests/peers/drifting-server.mjs), plans
// proposed by an agent over MCP, and decisions signed in the browser with a
// WebCrypto Ed25519 key that the test registers with `interlock keys register`.
//
// Run through `scripts/ui.sh test` (it builds the UI, sets up the peers and runs
// this under scripts/with-keyring). Screenshots: ui/test-results/screenshots/.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { FIRST_CONTACT, Gateway, plan, waitFor, screenshotsDir } from './harness.mjs';
import { launch } from './browser.mjs';

const shots = screenshotsDir;
const T = 20_000;

let gw;
let browser;
let page;
const problems = []; // console errors, page errors, CSP violations

/** `full`: the whole page; false for the viewport (a dialog is fixed to it). */
async function shot(name, { full = true } = {}) {
  await page.evaluate(() => document.fonts.ready);
  // Transient notifications would cover the view being shown.
  await page.evaluate(() => document.querySelector('.toasts')?.setAttribute('style', 'visibility:hidden'));
  // A dialog fades in: shown once it has (not half transparent over the page).
  await page.evaluate(() => Promise.all(document.getAnimations().filter((a) => a.effect?.getTiming().iterations !== Infinity).map((a) => a.finished)));
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: full });
  await page.evaluate(() => document.querySelector('.toasts')?.removeAttribute('style'));
}

/** Waits until the decision dialog is open with its reason field focused. */
async function dialogReady() {
  await page.locator('[role=dialog]').waitFor({ timeout: T });
  await until('the reason field has focus', () => document.activeElement?.id === 'reason');
}

/**
 * Confirms the open decision dialog with Enter and waits for it to close; a high
 * or critical item's dialog waits for a reason typed (issue 46), given as `reason`.
 */
async function confirmDialog(reason) {
  await dialogReady();
  if (reason) await page.keyboard.type(reason);
  await page.keyboard.press('Enter');
  const closed = page.locator('[role=dialog]').waitFor({ state: 'detached', timeout: T });
  const refused = page.locator('[role=dialog] .error-box').waitFor({ timeout: T }).then(async () => {
    throw new Error(`the decision was refused: ${await page.textContent('[role=dialog] .error-box')}`);
  });
  await Promise.race([closed, refused]);
  refused.catch(() => undefined);
}

/** Navigates inside the app (hash route) and waits for `testid` to be visible. */
async function route(hash, selector) {
  await page.evaluate((h) => (location.hash = h), hash);
  if (selector) await page.locator(selector).first().waitFor({ state: 'visible', timeout: T });
}

async function until(what, fn, arg) {
  try {
    await page.waitForFunction(fn, arg, { timeout: T, polling: 100 });
  } catch (e) {
    throw new Error(`timed out: ${what}\n${e.message}`);
  }
}

async function blur() {
  await page.evaluate(() => document.activeElement?.blur?.());
}

const rowKeys = () => page.$$eval('[data-testid=row]', (rs) => rs.map((r) => r.getAttribute('data-key')));

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  gw = new Gateway();
  const [b] = await Promise.all([
    launch(),
    gw.start().then(() => gw.seed()),
  ]);
  browser = b;
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  page = await ctx.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`),
    );
  });
});

after(async () => {
  await browser?.close();
  if (gw) {
    if (process.env.INTERLOCK_UI_SHOW_LOG) console.log(gw.log());
    await gw.stop();
  }
});

describe('the review UI against a real gateway', () => {
  it('is served by the gateway with its CSP, and Chromium has WebCrypto Ed25519', async () => {
    const r = await fetch(gw.base + '/');
    assert.equal(r.status, 200);
    const csp = r.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    const html = await r.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline scripts');
    // SPA fallback: a deep path gets index.html too.
    const deep = await fetch(gw.base + '/plans/anything');
    assert.equal(deep.status, 200);
    assert.match(await deep.text(), /<div id="app">/);

    await page.goto(gw.base + '/');
    const ed = await page.evaluate(async () => {
      const k = await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify']);
      const sig = await crypto.subtle.sign({ name: 'Ed25519' }, k.privateKey, new Uint8Array([1, 2, 3]));
      return { extractable: k.privateKey.extractable, sigLen: sig.byteLength, ua: navigator.userAgent };
    });
    assert.equal(ed.extractable, false);
    assert.equal(ed.sigLen, 64);
    console.log(`# ${ed.ua.match(/Chrome\/[\d.]+/)?.[0]}: WebCrypto Ed25519 works`);
  });

  it('asks for the API key, and Settings keeps it and shows the approver key', async () => {
    await page.locator('text=The reviewer API needs a key').waitFor({ timeout: T });
    await page.keyboard.press('g');
    await page.keyboard.press(',');
    await page.locator('#api-key').waitFor({ timeout: T });
    await page.fill('#api-key', gw.reviewerKey);
    await page.click('[data-testid=save-key]');
    await page.locator('[data-testid=key-state]', { hasText: 'Connected' }).waitFor({ timeout: T });
    await page.locator('[data-testid=fingerprint]').waitFor({ timeout: T });
    await page.locator('[data-testid=key-unregistered]').waitFor({ timeout: T });
    const fp = await page.textContent('[data-testid=fingerprint]');
    assert.match(fp, /^[0-9a-f]{4}(:[0-9a-f]{4}){3}$/);
    await page.fill('#identity', 'browser-reviewer');
    const command = (await page.textContent('[data-testid=register-command] code')).trim();
    const m = /^interlock keys register --public-key ([0-9a-f]{64}) --identity human:browser-reviewer$/.exec(command);
    assert.ok(m, command);
    gw.browserPublicKey = m[1];
    // The key survives a reload (IndexedDB), and so does the API key (localStorage).
    await page.reload();
    await page.locator('[data-testid=fingerprint]').waitFor({ timeout: T });
    assert.equal(await page.textContent('[data-testid=fingerprint]'), fp);
    assert.equal(await page.inputValue('#api-key'), gw.reviewerKey);
    await shot('settings');
  });

  it('shows the live inbox with risk labels in fixed-height rows', async () => {
    await blur();
    await route('#/inbox', '[data-testid=row]');
    await until('7 rows', () => document.querySelectorAll('[data-testid=row]').length === 7);
    const keys = await rowKeys();
    for (const k of ['plan:make-cache', 'plan:migrate-db', 'plan:restart-web', 'plan:rotate-logs', 'server:fresh', 'server:drifty', 'server:calm'])
      assert.ok(keys.includes(k), `${k} in ${keys}`);
    const risks = await page.$$eval('[data-testid=row]', (rs) =>
      Object.fromEntries(rs.map((r) => [r.getAttribute('data-key'), r.querySelector('[data-risk]')?.getAttribute('data-risk')])),
    );
    assert.deepEqual(
      [risks['plan:make-cache'], risks['plan:rotate-logs'], risks['plan:restart-web'], risks['plan:migrate-db'], risks['server:drifty']],
      ['low', 'medium', 'high', 'critical', 'critical'],
    );
    // A pending server leads with its first-contact risk (its surface was scanned before approval).
    assert.equal(risks['server:fresh'], 'critical');
    assert.match(await page.textContent('[data-key="server:fresh"]'), /first-contact scan: critical risk/);
    const colors = await page.$$eval('[data-risk]', (bs) =>
      Object.fromEntries(bs.map((b) => [b.getAttribute('data-risk'), getComputedStyle(b).backgroundColor])),
    );
    assert.equal(new Set([colors.low, colors.medium, colors.high, colors.critical]).size, 4, 'four distinct risk colours');
    const heights = await page.$$eval('[data-testid=row]', (rs) => rs.map((r) => r.getBoundingClientRect().height));
    assert.ok(heights.every((h) => h === heights[0]), `row heights ${heights}`);
    await until('the event stream is live', () => document.querySelector('[data-testid=stream-state]')?.dataset.state === 'live');
    await shot('inbox');

    // A plan proposed now appears without a reload, at the same row height.
    const before = await page.$eval('[data-testid=inbox]', (e) => e.getBoundingClientRect().top);
    await gw.propose(
      plan('flush-cdn', 'Flush the CDN cache', [
        { id: 'flush', action: 'http.request', target: 'https://cdn.example/purge', params: { method: 'POST' }, preconditions: [{ probe: 'http.status', params: { status: 200 } }], rollback: 'Nothing to undo: the cache refills.' },
      ]),
    );
    await until('the new plan row', () => !!document.querySelector('[data-key="plan:flush-cdn"]'));
    await page.locator('[data-testid=toast]', { hasText: 'Flush the CDN cache' }).waitFor({ timeout: T });
    assert.equal(await page.$eval('[data-testid=inbox]', (e) => e.getBoundingClientRect().top), before, 'the list did not move');
    const h2 = await page.$$eval('[data-testid=row]', (rs) => rs.map((r) => r.getBoundingClientRect().height));
    assert.ok(h2.every((h) => h === heights[0]));
    assert.equal(await page.textContent('[data-testid=count-inbox]'), '8');
  });

  it('moves with j/k, opens with Enter, returns with u, and has ? help', async () => {
    const keys = await rowKeys();
    const selected = () => page.$eval('.row.selected', (r) => r.getAttribute('data-key'));
    assert.equal(await selected(), keys[0]);
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    assert.equal(await selected(), keys[2]);
    await page.keyboard.press('k');
    assert.equal(await selected(), keys[1]);
    await page.keyboard.press('ArrowDown');
    assert.equal(await selected(), keys[2]);
    await page.keyboard.press('Enter');
    const [kind, id] = keys[2].split(':');
    await until('the detail view', (h) => location.hash === h, kind === 'plan' ? `#/plans/${id}` : `#/servers/${id}`);
    await page.locator('[data-testid=approve]').waitFor({ timeout: T });
    await page.keyboard.press('u');
    await until('back to the inbox', () => location.hash === '#/inbox');
    await page.locator('[data-testid=row]').first().waitFor();
    await page.keyboard.press('o');
    await until('o opens too', () => location.hash !== '#/inbox');
    await page.locator('[data-testid=approve]').waitFor({ timeout: T });
    await page.keyboard.press('?');
    await page.locator('[role=dialog][aria-label="Keyboard shortcuts"]').waitFor({ timeout: T });
    await shot('help');
    await page.keyboard.press('Escape');
    await page.locator('[role=dialog]').waitFor({ state: 'detached', timeout: T });
    for (const [k, h] of [['s', '#/servers'], ['l', '#/log'], ['p', '#/plans']]) {
      await page.keyboard.press('g');
      await page.keyboard.press(k);
      await until(`g ${k}`, (x) => location.hash === x, h);
    }
    // The plans list: every plan's current revision, filterable by status.
    await until('5 plans', () => document.querySelectorAll('[data-testid=plans] [data-testid=row]').length === 5);
    await page.click('.filter >> text=PROPOSED');
    await until('5 proposed', () => document.querySelectorAll('[data-testid=plans] [data-testid=row]').length === 5);
    await shot('plans');
    await page.click('.filter >> text=APPROVED');
    await until('none approved yet', () => !!document.querySelector('[data-testid=plans] .empty'));
    await page.click('.filter >> text=All');
    await page.keyboard.press('g');
    await page.keyboard.press('i');
    await until('g i', () => location.hash === '#/inbox');
  });

  it('reviews a plan: stages, hash, canonical JSON, diff against the previous revision', async () => {
    const api = await gw.api('/api/v1/plans/rotate-logs');
    await route('#/plans/rotate-logs', '[data-testid=stage]');
    assert.equal(await page.locator('[data-testid=stage]').count(), 2);
    const stage1 = await page.textContent('[data-testid=stage] >> nth=0');
    for (const s of ['write-config', 'fs.write_file', 'logrotate.conf', 'fs.path_absent', 'fs.file_contains', 'Delete logrotate.conf.'])
      assert.ok(stage1.includes(s), `${s} in stage 1`);
    assert.ok((await page.textContent('[data-testid=plan-hash]')).includes(api.plan.plan_hash));
    await page.locator('[data-testid=hash-recomputed]').waitFor({ timeout: T });
    assert.equal(await page.textContent('[data-testid=canonical]'), api.canonical);
    await page.locator('[data-testid=plan-diff] .d2h-file-wrapper').waitFor({ timeout: T });
    const diff = await page.textContent('[data-testid=plan-diff]');
    assert.ok(diff.includes('rotate 7') && diff.includes('rotate 14'), 'both revisions in the diff');
    assert.equal(await page.locator('[data-testid=plan-diff] .d2h-file-side-diff').count(), 2, 'side by side');
    await page.keyboard.press('d');
    await until('unified diff', () => !document.querySelector('[data-testid=plan-diff] .d2h-file-side-diff'));
    await page.keyboard.press('d');
    await page.locator('[data-testid=plan-diff] .d2h-file-side-diff').first().waitFor({ timeout: T });
    await page.keyboard.press('j');
    assert.equal(await page.locator('.nav-current').count(), 1, 'j highlights a section');
    await shot('plan');
  });

  it('refuses a decision signed by an unregistered browser key, showing the API error', async () => {
    await route('#/plans/restart-web', '[data-testid=stage]');
    await page.keyboard.press('a');
    const dialog = page.locator('[role=dialog]');
    await dialog.waitFor({ timeout: T });
    assert.match(await dialog.textContent(), /sha256:[0-9a-f]{64}/, 'the dialog shows the hash being signed');
    const seen = problems.length;
    await dialogReady();
    // A high-risk plan: the reason is typed (issue 46), then Enter signs.
    await page.keyboard.type('Restart agreed with on-call.');
    await page.keyboard.press('Enter');
    await page.locator('.error-box').waitFor({ timeout: T });
    // Chromium logs the refused POST itself; that one is the point of this test.
    for (let i = problems.length - 1; i >= seen; i--) if (/status of 422/.test(problems[i])) problems.splice(i, 1);
    const err = await page.textContent('.error-box');
    assert.match(err, /422/);
    assert.match(err, /not a trusted approver key/);
    await shot('decision-refused');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached', timeout: T });
    assert.equal((await gw.api('/api/v1/plans/restart-web')).plan.status, 'PROPOSED');
  });

  it('approves a plan end to end once the browser key is registered', async () => {
    await gw.cli('keys', 'register', '--public-key', gw.browserPublicKey, '--identity', 'human:browser-reviewer');
    await route('#/plans/restart-web', '[data-testid=stage]');
    await page.keyboard.press('a');
    await page.locator('[role=dialog]').waitFor({ timeout: T });
    await shot('decision-dialog');
    await confirmDialog('Restart agreed with on-call.');
    await page.locator('.page-head [data-status=APPROVED]').waitFor({ timeout: T });
    await page.locator('[data-testid=decisions] li').first().waitFor({ timeout: T });
    const api = await gw.api('/api/v1/plans/restart-web');
    assert.equal(api.plan.status, 'APPROVED');
    assert.equal(api.decisions.length, 1);
    assert.equal(api.decisions[0].decision, 'approve');
    const { approvers } = await gw.api('/api/v1/approvers');
    const mine = approvers.find((a) => a.identity === 'human:browser-reviewer');
    assert.equal(api.decisions[0].approver_key_id, mine.key_id);
    assert.equal(await page.locator('[data-testid=approve]').isDisabled(), true);
    await shot('plan-approved');
    // Settings now says the key is registered.
    await route('#/settings', '[data-testid=key-registered]');
  });

  it('rejects a plan with a required reason (r from the inbox)', async () => {
    await route('#/inbox', '[data-key="plan:make-cache"]');
    const keys = await rowKeys();
    for (let i = 0; i < keys.indexOf('plan:make-cache'); i++) await page.keyboard.press('j');
    await page.keyboard.press('r');
    await until('the make-cache plan', () => location.hash === '#/plans/make-cache');
    const dialog = page.locator('[role=dialog]');
    await dialog.waitFor({ timeout: T });
    assert.match(await dialog.textContent(), /Reject this plan/);
    await dialogReady();
    await page.keyboard.press('Enter');
    await page.locator('.error-box', { hasText: 'A reason is needed' }).waitFor({ timeout: T });
    await page.keyboard.type('The cache belongs on the data volume.');
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached', timeout: T });
    await page.locator('.page-head [data-status=REJECTED]').waitFor({ timeout: T });
    const api = await gw.api('/api/v1/plans/make-cache');
    assert.equal(api.plan.status, 'REJECTED');
    assert.equal(api.decisions[0].reason, 'The cache belongs on the data volume.');
  });

  it('never signs a plan that changed while the dialog was open', async () => {
    const ws = path.join(gw.dir, 'data/workspace');
    await route('#/plans/rotate-logs', '[data-testid=stage]');
    const before = (await gw.api('/api/v1/plans/rotate-logs')).plan;
    await page.keyboard.press('a');
    await dialogReady();
    // The agent revises the plan under the reviewer's eyes.
    await gw.propose(
      plan('rotate-logs', 'Rotate application logs', [
        { id: 'write-config', action: 'fs.write_file', target: path.join(ws, 'logrotate.conf'), params: { content: 'rotate 999\n' }, preconditions: [{ probe: 'fs.path_absent' }], rollback: 'Delete it.' },
      ]),
    );
    await page.locator('[data-testid=stale]').waitFor({ timeout: T });
    assert.equal(await page.locator('[role=dialog] button[type=submit]').isDisabled(), true);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Escape');
    await page.locator('[role=dialog]').waitFor({ state: 'detached', timeout: T });
    const after = await gw.api('/api/v1/plans/rotate-logs');
    assert.equal(after.plan.revision, before.revision + 1);
    assert.equal(after.plan.status, 'PROPOSED');
    assert.deepEqual(after.decisions, []);
    await until('the view shows the new revision', (r) => document.querySelector('.page-head .sub')?.textContent.includes(`revision ${r}`), after.plan.revision);
  });

  it('reviews a pending server’s whole surface', async () => {
    await route('#/servers/fresh', '[data-testid=tool]');
    const listed = (await gw.api('/api/v1/servers/fresh')).observed.tools.length;
    assert.ok(listed >= 5, `the fixture server lists ${listed} tools`);
    assert.equal(await page.locator('[data-testid=tool]').count(), listed);
    assert.match(await page.textContent('.banner'), /nothing is served until a reviewer approves/);
    assert.equal(await page.locator('[data-testid=drift-list]').count(), 0);
    await shot('server-pending');
  });

  it('shows a pending server’s first-contact risk and findings, by tool, before it can be approved', async () => {
    const api = await gw.api('/api/v1/servers/fresh');
    assert.equal(api.first_contact.risk, 'critical');
    await route('#/servers/fresh', '[data-testid=first-contact]');
    assert.equal(await page.getAttribute('[data-testid=server-risk] [data-risk]', 'data-risk'), 'critical');
    assert.equal(await page.getAttribute('[data-testid=first-contact]', 'data-risk-level'), 'critical');
    // Grouped by tool: every finding is in greet's `name` parameter description.
    const groups = await page.$$eval('[data-testid=fc-group]', (gs) => gs.map((g) => g.getAttribute('data-fc-tool')));
    assert.deepEqual(groups, ['greet']);
    const findings = await page.$$eval('[data-testid=fc-finding]', (fs) => fs.map((f) => f.textContent));
    assert.equal(findings.length, api.first_contact.findings.length);
    for (const f of api.first_contact.findings) {
      assert.ok(
        findings.some((t) => t.includes(f.field) && t.includes(f.kind.replace(/_/g, ' ')) && t.includes(f.excerpt)),
        `${JSON.stringify(f)} in ${findings}`,
      );
    }
    assert.ok(FIRST_CONTACT.fresh.includes('id_rsa') && findings.some((t) => t.includes('id_rsa')));
    assert.match(await page.textContent('[data-testid=first-contact-summary]'), /5 findings in 1 place/);
    // Above the tools the approval would serve.
    const fcTop = await page.$eval('[data-testid=first-contact]', (e) => e.getBoundingClientRect().top);
    const toolTop = await page.$eval('[data-testid=tool]', (e) => e.getBoundingClientRect().top);
    assert.ok(fcTop < toolTop, `findings (${fcTop}) above the tools (${toolTop})`);
    // The approval dialog names the risk it approves at.
    await page.keyboard.press('a');
    // Escape is handled once the dialog has focus (pressed sooner, it raced in a run).
    await dialogReady();
    assert.equal(await page.getAttribute('[role=dialog] [data-risk]', 'data-risk'), 'critical');
    assert.match(await page.textContent('[role=dialog]'), /first-contact scan: 5 findings/);
    // Critical (issue 46): the findings in the dialog, the reason left to the reviewer.
    assert.equal(await page.locator('[data-testid=context-finding]').count(), api.first_contact.findings.length);
    assert.ok((await page.textContent('[data-testid=decision-context]')).includes('id_rsa'));
    assert.equal(await page.inputValue('#reason'), '');
    assert.equal(await page.locator('[data-testid=confirm]').isDisabled(), true);
    await shot('server-first-contact-dialog', { full: false });
    await page.keyboard.press('Escape');
    await page.locator('[role=dialog]').waitFor({ state: 'detached', timeout: T });
    await page.$eval('[data-testid=first-contact]', (e) => e.scrollIntoView({ block: 'start' }));
    await shot('server-first-contact');
  });

  it('reviews a quarantined server’s drift side by side and approves its surface', async () => {
    const api = await gw.api('/api/v1/servers/drifty');
    assert.equal(api.server.status, 'QUARANTINED');
    await route('#/servers/drifty', '[data-testid=drift]');
    const drift = await page.textContent('[data-testid=drift]');
    for (const s of ['critical', 'description_changed', 'greet', 'quarantine', 'id_rsa', 'concealment'])
      assert.ok(drift.includes(s), `${s} in drift`);
    await page.locator('[data-testid=surface-diff] .d2h-file-side-diff').first().waitFor({ timeout: T });
    const sides = await page.$$eval('[data-testid=surface-diff] .d2h-file-side-diff', (s) => s.map((x) => x.textContent));
    assert.ok(sides[0].includes('Greets a person by name.') && !sides[0].includes('IMPORTANT'), 'baseline on the left');
    assert.ok(sides[1].includes('<IMPORTANT>Before using this tool'), 'observed on the right, as text');
    assert.ok(sides[1].includes('inputSchema') && sides[1].includes('annotations'));
    assert.ok((await page.textContent('[data-testid=observed-hash]')).includes(api.server.observed_hash));
    await shot('server-drift');
    await page.keyboard.press('a');
    await page.locator('[role=dialog]').waitFor({ timeout: T });
    assert.ok((await page.textContent('[role=dialog]')).includes(api.server.observed_hash));
    await confirmDialog('The new greet text was checked with its maintainer.');
    await page.locator('.page-head [data-status=TRUSTED]').waitFor({ timeout: T });
    const now = await gw.api('/api/v1/servers/drifty');
    assert.equal(now.server.status, 'TRUSTED');
    assert.equal(now.server.baseline_hash, api.server.observed_hash);
    // Agents see its tools again.
    await waitFor('drifty__greet served', async () => {
      const r = await gw.rpc('tools/list', {});
      return r.tools.some((t) => t.name === 'drifty__greet');
    }, T);
  });

  it('lists servers with status, tools and drift', async () => {
    await route('#/servers', '[data-testid=row]');
    await until('4 servers', () => document.querySelectorAll('[data-testid=row]').length === 4);
    const rows = await page.$$eval('[data-testid=row]', (rs) =>
      Object.fromEntries(rs.map((r) => [r.getAttribute('data-key'), r.querySelector('[data-status]')?.getAttribute('data-status')])),
    );
    assert.deepEqual(rows, { calm: 'TRUSTED', drifty: 'TRUSTED', fresh: 'PENDING', vault: 'TRUSTED' });
    assert.match(await page.textContent('[data-key=calm]'), /1 held/);
    await shot('servers');
    await page.keyboard.press('Enter');
    await until('j/k/Enter in the servers list', () => location.hash === '#/servers/calm');
    await page.locator('[data-testid=blocked]').waitFor({ timeout: T });
    assert.match(await page.textContent('[data-testid=blocked]'), /greet/);
  });

  it('blocks one tool during review; after the server is approved it is shown blocked by reviewer and not served', async () => {
    const before = await gw.api('/api/v1/servers/fresh');
    assert.equal(before.server.status, 'PENDING');
    await route('#/servers/fresh', '[data-testid=tool][data-tool=greet]');
    // Per-tool decisions sign the tool's observed definition hash, which only the
    // gateway computes: the buttons are offered when its server view lists them.
    const perTool = Array.isArray(before.observed_tools);
    if (perTool) {
      // Keyboard: j through the sections to greet's card, b blocks it.
      for (let i = 0; i < 40; i++) {
        if (await page.$('.nav-current[data-testid=tool][data-tool=greet]')) break;
        await page.keyboard.press('j');
      }
      assert.ok(await page.$('.nav-current[data-testid=tool][data-tool=greet]'), 'j reaches greet');
      await page.keyboard.press('b');
      const dialog = page.locator('[role=dialog]');
      await dialog.waitFor({ timeout: T });
      assert.match(await dialog.textContent(), /Block this tool\?/);
      const hash = before.observed_tools.find((t) => t.name === 'greet').definition_hash;
      assert.ok((await dialog.textContent()).includes(hash), 'the dialog shows the definition hash it signs');
      await dialogReady();
      await page.keyboard.type('Its name parameter asks for ~/.ssh/id_rsa.');
      await confirmDialog();
    } else {
      assert.equal(await page.locator('[data-testid=tool-block]').count(), 0, 'no per-tool buttons without observed_tools');
      console.log('# GET /api/v1/servers/{name} has no observed_tools: greet is blocked through the CLI');
      await gw.cli('servers', 'reject', 'fresh', '--tool', 'greet', '--reason', 'Its name parameter asks for ~/.ssh/id_rsa.');
      await gw.waitServer('fresh', (x) => (x.blocked_tools || []).some((b) => b.tool === 'greet' && b.action === 'block'), 'with greet blocked');
      // A decision made by another process reaches this page on its next event or load.
      await page.reload();
      await page.locator('[data-testid=tool][data-tool=greet]').waitFor({ timeout: T });
    }
    await until('greet shown blocked while pending', () => document.querySelector('[data-testid=tool][data-tool=greet]')?.dataset.blocked === 'block');
    assert.equal((await gw.api('/api/v1/servers/fresh')).server.status, 'PENDING', 'blocking a tool leaves the server pending');
    // Approve the rest of the server (critical at first contact: a reason is typed).
    await page.keyboard.press('a');
    await confirmDialog('Every tool but greet read and found safe.');
    await page.locator('.page-head [data-status=TRUSTED]').waitFor({ timeout: T });
    const now = await gw.api('/api/v1/servers/fresh');
    assert.equal(now.server.status, 'TRUSTED');
    assert.deepEqual(now.server.blocked_tools.map((b) => [b.tool, b.action]), [['greet', 'block']]);
    await until('greet still blocked after approval', () => document.querySelector('[data-testid=tool][data-tool=greet]')?.dataset.blocked === 'block');
    assert.equal((await page.textContent('[data-testid=tool][data-tool=greet] [data-testid=tool-blocked]')).trim(), 'blocked by reviewer');
    assert.equal((await page.textContent('[data-testid=tool][data-tool=add] [data-testid=tool-state]')).trim(), 'served');
    assert.match(await page.textContent('[data-testid=blocked]'), /greet\s*blocked by reviewer/);
    assert.match(await page.textContent('.banner'), /1 tool blocked by a reviewer; the rest are served/);
    assert.equal(await page.locator('[data-testid=first-contact]').count(), 0, 'first contact is for pending servers');
    const served = await waitFor('fresh__add served', async () => {
      const r = await gw.rpc('tools/list', {});
      return r.tools.some((t) => t.name === 'fresh__add') ? r : null;
    }, T);
    assert.ok(!served.tools.some((t) => t.name === 'fresh__greet'), 'greet is not served');
    await page.$eval('[data-testid=tool][data-tool=greet]', (e) => e.scrollIntoView({ block: 'center' }));
    await shot('server-tool-blocked');
    if (perTool) {
      // And its own definition approved serves it again.
      await page.click('[data-testid=tool][data-tool=greet] [data-testid=tool-approve]');
      await confirmDialog();
      await until('greet released', () => document.querySelector('[data-testid=tool][data-tool=greet]')?.dataset.blocked === '');
      await waitFor('fresh__greet served', async () => (await gw.rpc('tools/list', {})).tools.some((t) => t.name === 'fresh__greet'), T);
    }
  });

  it('lists standing approvals and revokes one with a reason (g a)', async () => {
    await gw.cli('standing', 'add', '--config', gw.config, '--role', 'default', '--tool', 'drifty__add', '--shape', '{"a":"*","b":2}',
      '--for', '2h', '--reason', 'adding is harmless');
    await gw.cli('standing', 'add', '--config', gw.config, '--role', 'default', '--tool', 'calm__greet', '--shape', '{}',
      '--for', '1h', '--reason', 'greeting nobody');
    await blur();
    await page.keyboard.press('g');
    await page.keyboard.press('a');
    await until('g a', () => location.hash === '#/standing');
    await until('2 standing approvals', () => document.querySelectorAll('[data-testid=standing] [data-testid=row]').length === 2);
    const text = await page.textContent('[data-testid=standing]');
    assert.match(text, /drifty__add/);
    assert.match(text, /a = any, b = 2/);
    assert.match(text, /in 2h/, 'expiries read as a time to come');
    assert.equal(await page.$$eval('[data-testid=standing] [data-status=ACTIVE]', (s) => s.length), 2);
    await shot('standing');
    const row = page.locator('[data-testid=row]', { hasText: 'calm__greet' });
    await row.locator('[data-testid=revoke]').click();
    await page.locator('[role=dialog]').waitFor({ timeout: T });
    await page.fill('[data-testid=revoke-reason]', 'calm is being retired');
    await page.click('[role=dialog] button.danger');
    await page.locator('[role=dialog]').waitFor({ state: 'detached', timeout: T });
    await until('revoked', () =>
      [...document.querySelectorAll('[data-testid=standing] [data-testid=row]')].some(
        (r) => r.textContent.includes('calm__greet') && r.querySelector('[data-status=REVOKED]'),
      ),
    );
    const listed = await gw.api('/api/v1/standing');
    const greet = listed.standing.find((x) => x.tool === 'calm__greet');
    assert.equal(greet.active, false);
    assert.ok(greet.revoked_at);
    const log = await gw.api('/api/v1/log?limit=500');
    assert.match(JSON.stringify(log), /calm is being retired/);
  });

  it('shows the log and verifies the latest checkpoint in the browser', async () => {
    await route('#/log', '[data-testid=log-row]');
    await until('checkpoint checked', () => document.querySelector('[data-testid=checkpoint-verify]')?.dataset.ok);
    const verdict = await page.textContent('[data-testid=checkpoint-verify]');
    assert.equal(await page.getAttribute('[data-testid=checkpoint-verify]', 'data-ok'), 'true', verdict);
    assert.match(verdict, /Signature by interlock\.local\/log\/[0-9a-f]+ verified in this browser/);
    const cp = await gw.api('/api/v1/log/checkpoint');
    const shown = Number(await page.textContent('[data-testid=checkpoint-size]'));
    assert.ok(shown >= cp.size - 2 && shown <= cp.size, `size ${shown} vs ${cp.size}`);
    assert.match(await page.textContent('[data-testid=checkpoint-root]'), /^[0-9a-f]{64}$/);
    const types = await page.$$eval('[data-testid=log-row] .chip', (cs) => cs.map((c) => c.textContent));
    for (const t of ['plan.proposed', 'plan.decision', 'plan.transition', 'approver.registered', 'server.quarantined', 'server.approved'])
      assert.ok(types.includes(t), `${t} in ${types}`);
    await page.keyboard.press('j');
    await page.locator('[data-testid=log-entry]').waitFor({ timeout: T });
    assert.match(await page.textContent('[data-testid=log-entry]'), /"type"/);
    // The selected entry's inclusion proof, checked in the browser against the
    // signed checkpoint.
    await until('inclusion checked', () => document.querySelector('[data-testid=inclusion]')?.dataset.ok);
    const inclusion = await page.textContent('[data-testid=inclusion]');
    assert.equal(await page.getAttribute('[data-testid=inclusion]', 'data-ok'), 'true', inclusion);
    assert.match(inclusion, /In the checkpoint of \d+ entries signed by interlock\.local\/log/);
    // A statement leaf: no signature of its own, the checkpoint vouches for it.
    assert.match(inclusion, /Receipt: https:\/\/in-toto\.io\/Statement\/v1 · vouched for by the signed checkpoint/);
    await page.keyboard.press('j');
    await until('the next entry checked too', () => {
      const el = document.querySelector('[data-testid=inclusion]');
      return el?.dataset.ok === 'true' && document.querySelector('.log-row.selected');
    });
    await shot('log');
  });

  it('answers the auditor’s claim in the log view: No, with the drift windows', async () => {
    // An execution to check: calm's add is served (only its greet is held).
    const r = await gw.rpc('tools/call', { name: 'calm__add', arguments: { a: 1, b: 2 } });
    assert.ok(!r.isError, JSON.stringify(r));
    const api = await waitFor('the call in the claims', async () => {
      const c = await gw.api('/api/v1/claims');
      return c.executions_checked >= 1 ? c : null;
    }, T);
    assert.equal(api.answer, 'no');
    await route('#/inbox', '[data-testid=row]');
    await route('#/log', '[data-testid=claims-answer]');
    await until('the claim answered', () => document.querySelector('[data-testid=claims]')?.dataset.answer === 'no');
    assert.equal((await page.textContent('[data-testid=claims-answer] .word')).trim(), 'No');
    const sentence = await page.textContent('[data-testid=claims-sentence]');
    const m = /^No tool ran between a drift and the reviewer’s decision — (\d+) executions? checked against (\d+) drift windows?\.$/.exec(sentence);
    assert.ok(m, sentence);
    assert.ok(Number(m[1]) >= 1, sentence);
    assert.equal(Number(m[2]), api.windows.length);
    const rows = await page.$$eval('[data-testid=claims-window]', (rs) =>
      rs.map((r) => ({ label: r.querySelector('.tl-label').textContent, open: r.dataset.open, range: r.querySelector('.tl-range').textContent })),
    );
    assert.equal(rows.length, Math.min(8, api.windows.length));
    for (const w of api.windows.slice(0, 8)) {
      const label = w.tool === null ? `${w.server} (whole server)` : `${w.server}/${w.tool}`;
      const row = rows.find((x) => x.label === label && x.range.startsWith(`#${w.opened_at} →`));
      assert.ok(row, `${label} at #${w.opened_at} in ${JSON.stringify(rows)}`);
      assert.equal(row.open, String(w.closed_at === null));
      if (w.closed_at !== null) assert.ok(row.range.includes(`#${w.closed_at}`) && row.range.includes(w.closed_by), row.range);
    }
    // drifty's quarantine was closed by its approval; calm's greet is still held.
    assert.ok(api.windows.some((w) => w.server === 'drifty' && w.tool === null && w.closed_by === 'server.approved'), JSON.stringify(api.windows));
    assert.ok(api.windows.some((w) => w.server === 'calm' && w.tool === 'greet' && w.closed_at === null), JSON.stringify(api.windows));
    assert.equal(await page.locator('[data-testid=claims-violation]').count(), 0);
    await page.$eval('[data-testid=claims]', (e) => e.scrollIntoView({ block: 'start' }));
    await shot('claims');
  });

  it('shows a server’s probes and what its tools were seen to do; a probe that now succeeds quarantines it', async () => {
    for (const text of ['one', 'two', 'three']) {
      const r = await gw.rpc('tools/call', { name: 'vault__echo', arguments: { text } });
      assert.ok(!r.isError, JSON.stringify(r));
    }
    await waitFor('the echo envelope learned 3 calls', async () => {
      const d = await gw.api('/api/v1/servers/vault');
      return d.envelopes?.find((e) => e.tool === 'echo')?.envelope.calls >= 3 ? d : null;
    }, T);
    await route('#/inbox', '[data-testid=row]');
    await route('#/servers/vault', '[data-testid=probes]');
    await until('two probe rows', () => document.querySelectorAll('[data-testid=probe-row]').length === 2);
    const standings = () =>
      page.$$eval('[data-testid=probe-row]', (rs) => Object.fromEntries(rs.map((r) => [r.querySelector('td').textContent, r.dataset.standing])));
    assert.deepEqual(await standings(), { read_secret: 'ok', echo: 'ok' });
    await page.locator('[data-envelope-tool=echo]').waitFor({ timeout: T });
    const envelope = await page.textContent('[data-envelope-tool=echo]');
    assert.match(envelope, /learning/);
    assert.match(envelope, /calls/);
    assert.match(envelope, /Hosts in arguments/);
    await page.$eval('[data-testid=probes]', (e) => e.scrollIntoView({ block: 'start' }));
    await shot('server-behaviour');

    // The denied probe now succeeds: the server's permission grew, its surface did not.
    fs.writeFileSync(gw.vaultOpen, 'open');
    await gw.waitServer('vault', (s) => s.status === 'QUARANTINED', 'QUARANTINED on the probe');
    await route('#/inbox', '[data-testid=row]');
    await route('#/servers/vault', '[data-testid=probes]');
    await until('the grown probe shown', () => document.querySelector('[data-testid=probe-row][data-standing=grew]') !== null);
    assert.equal((await standings()).read_secret, 'grew');
    assert.match(await page.textContent('[data-testid=probes-grew]'), /server\.probe_drift/);
    assert.match(await page.textContent('.banner.bad'), /surface is unchanged, but a probe expected to be refused now succeeds/);
    await page.$eval('[data-testid=probes]', (e) => e.scrollIntoView({ block: 'start' }));
    await shot('server-probe-grew');
  });

  it('reconnects the event stream after the gateway restarts', async () => {
    await route('#/inbox', '[data-testid=row]');
    await until('live', () => document.querySelector('[data-testid=stream-state]')?.dataset.state === 'live');
    const seen = problems.length;
    await gw.restart();
    await until('reconnected', () => document.querySelector('[data-testid=stream-state]')?.dataset.state === 'live');
    // The stream cut by the restart is reported by Chromium; that one is expected.
    for (let i = problems.length - 1; i >= seen; i--)
      if (/ERR_INCOMPLETE_CHUNKED_ENCODING|ERR_CONNECTION_REFUSED/.test(problems[i])) problems.splice(i, 1);
    await gw.propose(
      plan('after-restart', 'Proposed after a restart', [
        { id: 'mk', action: 'fs.make_dir', target: path.join(gw.dir, 'data/workspace/x'), preconditions: [{ probe: 'fs.path_absent' }], rollback: 'Remove it.' },
      ]),
    );
    await until('the new row', () => !!document.querySelector('[data-key="plan:after-restart"]'));
  });

  it('uses the configuration the desktop app injects', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const p = await ctx.newPage();
    await p.addInitScript(([base, token]) => {
      window.__INTERLOCK__ = { desktop: true, apiBase: base, token };
    }, [gw.base, gw.reviewerKey]);
    await p.goto(gw.base + '/#/inbox');
    await p.locator('[data-testid=row]').first().waitFor({ timeout: T });
    assert.equal(await p.evaluate(() => localStorage.getItem('interlock.apiKey')), null, 'no key typed');
    await p.evaluate(() => (location.hash = '#/settings'));
    await p.locator('text=Provided by the desktop app').waitFor({ timeout: T });
    // Without Tauri's bridge the adapter says so rather than signing in the page.
    await p.locator('.error-box', { hasText: 'window.__TAURI__' }).waitFor({ timeout: T });
    await ctx.close();
  });

  it('logged no console errors and no CSP violations', () => {
    assert.deepEqual(problems, []);
  });
});
