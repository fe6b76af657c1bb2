// The auditor's claim: parsed strictly (a malformed or self-contradicting
// answer is an error, never a "no"), put in words, and laid out as bars.
import { describe, expect, it } from 'vitest';
import fixture from './fixtures/claims.json';
import { claimSentence, ClaimsError, parseClaims, timeline, windowLabel } from '../../src/lib/claims';

describe('claims', () => {
  it('reads a real gateway’s answer and says it in one sentence', () => {
    const c = parseClaims(fixture);
    expect(c.answer).toBe('no');
    expect(c.windows.map(windowLabel)).toEqual(['calm/greet', 'drifty (whole server)']);
    expect(claimSentence(c)).toBe(
      `No tool ran between a drift and the reviewer’s decision — ${c.executions_checked} executions checked against 2 drift windows.`,
    );
  });

  it('lays windows out over the log’s indexes, open ones to the end, short ones still visible', () => {
    const c = parseClaims({
      question: 'q',
      answer: 'yes',
      leaves_read: 200,
      executions_checked: 3,
      windows: [
        { server: 'b', tool: 't', opened_at: 100, closed_at: null, closed_by: null },
        { server: 'a', tool: null, opened_at: 10, closed_at: 11, closed_by: 'server.approved' },
        { server: 'a', tool: 'x', opened_at: 20, closed_at: 70, closed_by: 'tool.approved' },
      ],
      violations: [
        {
          leaf_index: 42,
          executed_at: 41,
          server: 'a',
          tool: 'x',
          verdict: 'allow',
          window: { server: 'a', tool: 'x', opened_at: 20, closed_at: 70, closed_by: 'tool.approved' },
        },
      ],
    });
    const t = timeline(c);
    expect(t.size).toBe(200);
    expect(t.bars.map((b) => [b.label, b.left, b.width, b.open])).toEqual([
      ['a (whole server)', 5, 0.8, false],
      ['a/x', 10, 25, false],
      ['b/t', 50, 50, true],
    ]);
    expect(t.bars[1].violations.map((v) => [v.at, v.v.leaf_index])).toEqual([[20.5, 42]]);
    expect(t.bars[0].violations).toEqual([]);
    expect(claimSentence(c)).toBe(
      'Yes: 1 execution ran between a drift and the reviewer’s decision — 3 executions checked against 3 drift windows.',
    );
  });

  it('refuses an answer that is malformed or contradicts its violations', () => {
    const base = { question: 'q', answer: 'no', leaves_read: 3, executions_checked: 0, windows: [], violations: [] };
    expect(parseClaims(base).windows).toEqual([]);
    expect(() => parseClaims(null)).toThrow(ClaimsError);
    expect(() => parseClaims({ ...base, answer: 'maybe' })).toThrow(/not "no" or "yes"/);
    expect(() => parseClaims({ ...base, answer: 'yes' })).toThrow(/0 violation/);
    expect(() => parseClaims({ ...base, windows: {} })).toThrow(/windows is not a list/);
    expect(() =>
      parseClaims({ ...base, windows: [{ server: 's', tool: null, opened_at: 5, closed_at: 4, closed_by: 'x' }] }),
    ).toThrow(/closed_at is not a log index after opened_at/);
    expect(() => parseClaims({ ...base, windows: [{ server: 's', tool: 1, opened_at: 5, closed_at: null }] })).toThrow(/tool/);
    const w = { server: 's', tool: 't', opened_at: 1, closed_at: null, closed_by: null };
    expect(() =>
      parseClaims({ ...base, violations: [{ leaf_index: 2, executed_at: 2, server: 's', tool: 't', verdict: 'allow', window: w }] }),
    ).toThrow(/answer is "no" but 1 violation/);
  });
});
