// How a receipt reads to an auditor (issue 46 item 3), on receipts a real
// gateway returned (fixtures/receipts-page.json): the verdict in words, who
// decided by name, times with their timezone, a tool call's two leaves as one
// row, no event type repeated as the row's text.
import { describe, expect, it } from 'vitest';
import page from './fixtures/receipts-page.json';
import type { Receipt } from '../../src/lib/api';
import {
  annotateTimes,
  approverNames,
  decider,
  groupReceipts,
  nameOfKey,
  UNRECORDED,
  rowText,
  subjectOf,
  verdictOf,
  whatOf,
  whyOf,
  zonedTime,
} from '../../src/lib/receipt';

const receipts = page.receipts as unknown as Receipt[];
const byKind = (k: string) => receipts.filter((r) => r.kind === k);
const names = approverNames(page.approvers, receipts);
const KEY = page.approvers[0].key_id;

describe('zonedTime', () => {
  const t = 1796579083; // 2026-12-06T17:44:43Z
  it('says UTC where the offset is zero', () => {
    expect(zonedTime(t, 0)).toBe('2026-12-06 17:44:43 UTC');
  });
  it('gives the local time with its offset east and west of UTC', () => {
    expect(zonedTime(t, 60)).toBe('2026-12-06 18:44:43 UTC+01:00');
    expect(zonedTime(t, 330)).toBe('2026-12-06 23:14:43 UTC+05:30');
    expect(zonedTime(t, -300)).toBe('2026-12-06 12:44:43 UTC−05:00');
    // Across midnight the date moves too.
    expect(zonedTime(t, 420)).toBe('2026-12-07 00:44:43 UTC+07:00');
  });
  it("defaults to this machine's zone, and always names one", () => {
    expect(zonedTime(t)).toMatch(/^2026-12-0[67] \d\d:\d\d:\d\d UTC([+−]\d\d:\d\d)?$/);
    expect(zonedTime(null)).toBe('');
  });
});

describe('annotateTimes', () => {
  it('dates every Unix time in a statement, leaving the numbers as signed', () => {
    const text = JSON.stringify({ expires_at: 1796582683, issued_at: 1796579083, revision: 1, seq: 1796579083, nested: { time: 1796579083 } }, null, 2);
    const out = annotateTimes(text, 0);
    expect(out).toContain('"expires_at": 1796582683,  // 2026-12-06 18:44:43 UTC');
    expect(out).toContain('"issued_at": 1796579083,  // 2026-12-06 17:44:43 UTC');
    expect(out).toContain('"time": 1796579083  // 2026-12-06 17:44:43 UTC');
    // Not a time: left alone.
    expect(out).toContain('"revision": 1,\n');
    expect(out).toContain('"seq": 1796579083,\n');
    // Take the comments out and it is the same JSON.
    expect(JSON.parse(out.replace(/ {2}\/\/ .*$/gm, ''))).toEqual(JSON.parse(text));
  });
});

describe('verdict in words', () => {
  it('a rejected plan decision reads Rejected (the summary has no verdict: the predicate says decision "reject")', () => {
    const [d] = byKind('plan.decision');
    expect(d.verdict).toBeNull();
    expect(verdictOf(d)).toEqual({ text: 'Rejected', tone: 'bad' });
    expect(verdictOf(byKind('plan.transition')[0]).text).toBe('Rejected');
  });
  it('tool calls: Allowed, Blocked; an intent leaf says it was being forwarded', () => {
    const [blocked, allowed] = byKind('tool.call');
    expect(verdictOf(blocked)).toEqual({ text: 'Blocked', tone: 'bad' });
    expect(verdictOf(allowed)).toEqual({ text: 'Allowed', tone: 'ok' });
    expect(verdictOf(byKind('tool.call.intent')[0]).text).toBe('Allowed · forwarding');
  });
  it('decisions on servers and the rest, from the event type', () => {
    expect(verdictOf(byKind('server.approved')[0]).text).toBe('Approved');
    expect(verdictOf(byKind('server.pending')[0]).text).toBe('Pending review');
    expect(verdictOf(byKind('apikey.issued')[0]).text).toBe('Issued');
    expect(verdictOf(byKind('approver.registered')[0]).text).toBe('Registered');
    const shadow = { ...byKind('tool.call')[1], verdict: 'shadow_would_block', outcome: 'ok' } as Receipt;
    expect(verdictOf(shadow).text).toMatch(/^Would have been blocked \(shadow mode\)/);
  });
});

describe('who decided', () => {
  it('names the approver, not the key id', () => {
    expect(names.get(KEY)).toBe('human:cli-reviewer');
    const d = decider(byKind('plan.decision')[0], names);
    expect(d).toEqual({ name: 'human:cli-reviewer', role: 'approver', keyId: KEY });
    expect(decider(byKind('server.approved')[0], names).name).toBe('human:cli-reviewer');
  });
  it('a decision that only carries its key id is named through the registrations', () => {
    const r = { ...byKind('plan.decision')[0], approver: null, predicate: { ...byKind('plan.decision')[0].predicate, approver: undefined } } as Receipt;
    expect(decider(r, names).name).toBe('human:cli-reviewer');
    // With no registration at hand: the key, shortened, never a bare hash run.
    expect(decider(r, new Map()).name).toBe(`key ${KEY.slice(0, 16)}…`);
    expect(nameOfKey(KEY, approverNames([], receipts))).toBe('human:cli-reviewer');
  });
  it("a tool call is decided by the gateway's policy; a plan is proposed by its agent", () => {
    expect(decider(byKind('tool.call')[0], names)).toMatchObject({ name: "the gateway's policy", role: 'policy' });
    expect(decider(byKind('plan.proposed')[0], names).name).toBe('agent:builder');
  });
  it('says so when the receipt names no one (an API key issued, an approver key registered)', () => {
    expect(decider(byKind('apikey.issued')[0], names)).toEqual({ name: UNRECORDED, role: 'unrecorded' });
    // The registration's identity is whose key it is, not who registered it.
    expect(decider(byKind('approver.registered')[0], names).name).toBe(UNRECORDED);
  });
});

describe('what, subject, why', () => {
  it('says what happened to which subject, and why', () => {
    const d = byKind('plan.decision')[0];
    expect(subjectOf(d)).toBe('plan restart-web r1');
    expect(whyOf(d)).toBe('Not during business hours.');
    expect(whatOf(byKind('tool.call')[0])).toBe('agent builder called calm/greet');
    expect(whyOf(byKind('tool.call')[0])).toMatch(/looks like a secret/);
    // An allowed call's detail is its duration, not a reason.
    expect(whyOf(byKind('tool.call')[1])).toBe('');
  });
  it('never repeats the event type as the row (was "apikey.issued · apikey.issued")', () => {
    for (const r of receipts) {
      const line = rowText({ key: String(r.index), main: r, leaves: [r] }, names);
      expect(line).not.toContain(`${r.kind} · ${r.kind}`);
      expect(line).not.toMatch(/ed25519:[0-9a-f]{8}/);
      expect(line).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    }
    const [reviewer, agent] = byKind('apikey.issued');
    expect(whatOf(reviewer)).toBe('issued reviewer key ui-tests (role reviewer)');
    expect(whatOf(agent)).toBe('issued agent key builder (role default)');
  });
  it('a rejected plan row says Rejected, by whom, when and why', () => {
    const d = byKind('plan.decision')[0];
    expect(rowText({ key: '9', main: d, leaves: [d] }, names)).toBe(
      `Rejected · decided on plan restart-web r1 · by human:cli-reviewer · ${zonedTime(d.time)} · why: Not during business hours.`,
    );
  });
});

describe('groupReceipts', () => {
  it("joins a tool call's intent and outcome leaves in one row, where the outcome is", () => {
    const groups = groupReceipts(receipts);
    expect(groups.length).toBe(receipts.length - 1);
    const call = groups.find((g) => g.leaves.length > 1)!;
    expect(call.main.kind).toBe('tool.call');
    expect(call.leaves.map((l) => l.kind)).toEqual(['tool.call', 'tool.call.intent']);
    expect(call.leaves[0].predicate?.call_id).toBe(call.leaves[1].predicate?.call_id);
    expect(call.key).toBe(String(call.main.index));
    // The blocked call was never forwarded: one leaf, its own row.
    const blocked = groups.find((g) => g.main.kind === 'tool.call' && g.main.verdict === 'blocked')!;
    expect(blocked.leaves.length).toBe(1);
    // Order is kept (newest first).
    const idx = groups.map((g) => g.main.index);
    expect([...idx].sort((a, b) => b - a)).toEqual(idx);
  });
  it('joins by intent_index when a leaf has no call_id, and keeps a lone intent', () => {
    const strip = (r: Receipt): Receipt => ({ ...r, predicate: { ...r.predicate, call_id: undefined } });
    const outcome = strip(byKind('tool.call')[1]);
    const intent = strip(byKind('tool.call.intent')[0]);
    expect(groupReceipts([outcome, intent]).map((g) => g.leaves.length)).toEqual([2]);
    expect(groupReceipts([intent]).map((g) => g.main.kind)).toEqual(['tool.call.intent']);
  });
});

describe('whatOf on servers', () => {
  it('reads a reviewer act as a verb on its subject, and the rest as the subject and its state', () => {
    expect(whatOf(byKind('server.approved')[0])).toBe('approved server calm');
    expect(whatOf(byKind('server.pending')[0])).toBe('server calm: pending review');
    const quarantined = { ...byKind('server.pending')[0], kind: 'server.quarantined' } as Receipt;
    expect(whatOf(quarantined)).toBe('server calm: quarantined');
  });
});

// Issue 40: a coding agent's own tool use, as its hook reported it, reads
// like a call: who decided (the policy), what (the agent, the tool, the
// client, where), the verdict in words.
describe('hook.call receipts', () => {
  const hook = {
    agent: 'hook-agent',
    approver: null,
    findings: [],
    hash: null,
    index: 40,
    kind: 'hook.call',
    outcome: null,
    plan_id: null,
    predicate: {
      agent: 'hook-agent',
      binding_hash: 'sha256:' + '1'.repeat(64),
      client: 'claude-code',
      cwd: '/home/user/my-project',
      event: 'PreToolUse',
      phase: 'before',
      role: 'default',
      session: 's',
      tool: 'Bash',
      tool_name: 'Bash',
      type: 'hook.call',
      verdict: { verdict: 'held', plan_id: 'call-hook-1', hold_reasons: 'inspection found destructive', risk: 'critical', score: 100 },
    },
    reasons: 'inspection found destructive',
    server: null,
    shadow: false,
    time: 1796579083,
    tool: 'Bash',
    verdict: 'held',
  } as unknown as Receipt;
  it('names the agent, the tool, the client and the directory', () => {
    expect(whatOf(hook)).toBe('agent hook-agent used Bash in claude-code (/home/user/my-project)');
    expect(subjectOf(hook)).toBe("claude-code's Bash");
    expect(decider(hook, names).role).toBe('policy');
    expect(verdictOf(hook).tone).toBe('hold');
  });
});

describe('llm.call receipts', () => {
  const llm = {
    agent: 'ci',
    approver: null,
    findings: [],
    hash: null,
    index: 41,
    kind: 'llm.call',
    outcome: null,
    plan_id: null,
    predicate: {
      agent: 'ci',
      layers: [{ layer: 'policy', micros: 3 }, { layer: 'rules', micros: 120 }],
      model: 'gpt-4o',
      provider: 'openai',
      request_hash: 'sha256:' + '2'.repeat(64),
      role: 'default',
      stream: true,
      type: 'llm.call',
      verdict: { verdict: 'blocked', layer: 'rules', rule: 'injection', path: '$.messages[1].content', reason: 'text aimed at the model in the tool text' },
    },
    reasons: 'text aimed at the model in the tool text',
    server: null,
    shadow: false,
    time: 1796579084,
    tool: null,
    verdict: 'blocked',
  } as unknown as Receipt;
  it('names the agent, the model and its provider, decided by policy', () => {
    expect(whatOf(llm)).toBe('agent ci asked model gpt-4o (openai)');
    expect(subjectOf(llm)).toBe('model gpt-4o');
    expect(decider(llm, names).role).toBe('policy');
    expect(verdictOf(llm).tone).toBe('bad');
  });
});
