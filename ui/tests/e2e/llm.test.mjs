// The LLM proxy's verdicts as a reviewer and an auditor see them (issue 42),
// against a REAL gateway relaying to the provider stand-in
// (tests/peers/llm-provider.py, standard library only: no provider is
// reachable here): a request let through and one stopped each read as a
// receipt — who asked which model, the verdict, and why (never the prompt)
// — and the Overview counts them under "(models)"; a request held for a
// reviewer (a key whose llm_policy says on_hit = "hold", set through the
// admin API) reads on its plan page as the messages it would send.
// Screenshots (1280 and 390, light and dark): ui/test-results/screenshots/issue42-*.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { Gateway, uiDir, repoDir, screenshotsDir } from './harness.mjs';
import { launch, reviewerPage } from './browser.mjs';

const shots = screenshotsDir;
const T = 30_000;

let gw;
let provider;
let browser;
let page;
const problems = [];

async function startProvider(log) {
  const child = spawn('python3', [path.join(repoDir, 'tests/peers/llm-provider.py'), log], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the provider stand-in exited (${code})`)));
  });
  const m = /^listening on (\d+)$/.exec(line);
  if (!m) throw new Error(`the provider stand-in said ${line}`);
  return { child, port: Number(m[1]) };
}

async function ask(prompt, key = gw.agentKey, messages = [{ role: 'user', content: prompt }]) {
  const r = await fetch(gw.base + '/v1/chat/completions', {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'standin-small', messages }),
  });
  return { status: r.status, body: await r.json() };
}

async function shot(name) {
  await page.evaluate(() => document.fonts.ready);
  await page.screenshot({ path: path.join(shots, `issue42-${name}.png`), fullPage: true });
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true });
  const dir = fs.mkdtempSync(path.join(uiDir, 'test-results', 'llm-'));
  provider = await startProvider(path.join(dir, 'provider.jsonl'));
  gw = new Gateway();
  const extra = `[llm]\nhold_secs = 1\n\n[llm.policy]\nblocked_keywords = ["project falcon"]\n\n[llm.providers.local]\nbase_url = "http://127.0.0.1:${provider.port}/v1"\nmodels = ["standin-small"]\n\n`;
  const [b] = await Promise.all([launch(), gw.start({ servers: [], extra })]);
  browser = b;
  const ok = await ask('Plan a picnic for six');
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  const stopped = await ask('Any news on Project Falcon?');
  assert.equal(stopped.status, 403, JSON.stringify(stopped.body));
  page = await reviewerPage(browser, gw.reviewerKey, problems, { 'interlock.receiptsPreset': 'all' });
});

after(async () => {
  await browser?.close();
  await gw?.stop();
  provider?.child.kill();
});

describe('the LLM proxy in the review UI (issue 42)', () => {
  it('each request to a model reads as a receipt: who, which model, the verdict and why', async () => {
    await page.goto(gw.base + '/#/receipts');
    await page.locator('[data-testid=receipt-row]').first().waitFor({ timeout: T });
    await page.selectOption('[data-testid=filter-event]', 'llm.call');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=receipt-row]').length === 2, null, { timeout: T });
    const rows = await page.$$eval('[data-testid=receipt-row]', (rs) =>
      rs.map((r) => ({
        text: r.innerText,
        verdict: r.querySelector('[data-testid=row-verdict]')?.textContent.trim(),
        who: r.querySelector('[data-testid=row-who]')?.textContent.trim(),
        why: r.querySelector('[data-testid=row-why]')?.textContent.trim() ?? '',
      })),
    );
    for (const r of rows) {
      assert.match(r.text, /agent builder asked model standin-small \(local\)/, r.text);
      assert.equal(r.who, "the gateway's policy");
      // The reason may name the policy's own keyword, never the rest of the prompt.
      assert.doesNotMatch(r.text, /picnic|any news/i, 'the prompt is not on a receipt');
    }
    const verdicts = rows.map((r) => r.verdict).sort();
    assert.deepEqual(verdicts, ['Allowed', 'Blocked']);
    const blocked = rows.find((r) => r.verdict === 'Blocked');
    assert.match(blocked.why, /blocked keyword/, blocked.why);
    await shot('receipts-1280-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot('receipts-1280-dark');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot('receipts-390-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('a held request reads on its plan page as the messages it would send', async () => {
    const owner = (await gw.cli('admin', 'token', 'create', 'root', '--scope', 'owner')).trim();
    const created = await fetch(gw.base + '/api/v1/admin/keys', {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'agent', name: 'researcher', llm_policy: { on_hit: 'hold' } }),
    }).then((r) => r.json());
    assert.ok(created.key, JSON.stringify(created));
    const held = await ask('', created.key, [
      { role: 'system', content: 'You answer questions about our roadmap.' },
      { role: 'user', content: 'Summarize the attached status page.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'fetch', arguments: '{"url":"https://status.example"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'Status: Project Falcon ships on Friday.' },
    ]);
    assert.equal(held.status, 403, JSON.stringify(held.body));
    assert.equal(held.body.error.code, 'prompt_held');
    const planId = /`(call-llm-[^`]+)`/.exec(held.body.error.message)?.[1];
    assert.ok(planId, held.body.error.message);
    await page.goto(gw.base + `/#/plans/${planId}`);
    const box = page.locator('[data-testid=held-prompt]');
    await box.waitFor({ timeout: T });
    const text = await box.innerText();
    assert.match(text, /Held by the policy layer: a blocked keyword/);
    assert.match(text, /Status: Project Falcon ships on Friday\./);
    assert.match(text, /calls fetch with/);
    assert.deepEqual(
      await page.$$eval('.prompt-role', (rs) => rs.map((r) => r.textContent.trim().toLowerCase())),
      ['system', 'user', 'assistant', 'tool'],
    );
    await shot('held-plan-1280-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 390, height: 844 });
    await shot('held-plan-390-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('the Overview counts requests to models under (models)', async () => {
    const overview = await gw.api('/api/v1/overview');
    const models = overview.servers.find((s) => s.name === '(models)');
    assert.ok(models, JSON.stringify(overview.servers));
    // Allowed, blocked, and the held one.
    assert.equal(models.calls, 3);
    assert.equal(models.blocks, 1);
    await page.goto(gw.base + '/#/overview');
    await page.locator('[data-testid=chart-servers]').getByText('(models)').first().waitFor({ timeout: T });
    await shot('overview-1280-light');
    assert.deepEqual(problems, []);
  });
});
