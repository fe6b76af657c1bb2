// The server review's behaviour panel (issue 16 items 1 and 2): probe rows and envelope facts.
import { describe, expect, it } from 'vitest';
import type { Envelope, ProbesView } from '../../src/lib/api';
import { bytesLabel, envelopeFacts, errorRate, probeRows } from '../../src/lib/behaviour';

const run = (tool: string, outcome: 'succeeded' | 'refused', verdict: 'met' | 'exceeded', h = `sha256:${tool}`) => ({
  tool,
  arguments_hash: h,
  outcome,
  result_hash: null,
  verdict,
});

describe('probeRows', () => {
  it('matches baselines and findings by tool and arguments, grown probes first', () => {
    const view: ProbesView = {
      observed: [run('echo', 'succeeded', 'met'), run('read_secret', 'succeeded', 'exceeded')],
      observed_at: 1,
      baseline: [run('read_secret', 'refused', 'met'), run('echo', 'succeeded', 'met')],
      baseline_at: 0,
      findings: [
        {
          tool: 'read_secret',
          arguments_hash: 'sha256:read_secret',
          expected: { kind: 'denied' },
          observed: { outcome: 'succeeded', result_hash: null },
          baseline: 'refused',
          kind: 'permission_grew',
          action: 'quarantine',
          summary: 'read_secret: expected denied, succeeded',
        },
      ],
    };
    const rows = probeRows(view);
    expect(rows.map((r) => [r.tool, r.standing, r.baseline])).toEqual([
      ['read_secret', 'grew', 'refused'],
      ['echo', 'ok', 'succeeded'],
    ]);
    expect(rows[0].finding?.kind).toBe('permission_grew');
  });

  it('a probe with the same tool but other arguments is its own row', () => {
    const view: ProbesView = {
      observed: [run('read', 'refused', 'met', 'sha256:a'), run('read', 'succeeded', 'met', 'sha256:b')],
      observed_at: 1,
      baseline: null,
      baseline_at: null,
      findings: [],
    };
    expect(probeRows(view).map((r) => [r.argumentsHash, r.baseline])).toEqual([
      ['sha256:a', null],
      ['sha256:b', null],
    ]);
    expect(probeRows(null)).toEqual([]);
  });
});

describe('envelopes', () => {
  const e: Envelope = {
    format: 'interlock.envelope/v1',
    calls: 20,
    errors: 3,
    arg_hosts: ['api.example.com'],
    arg_roots: [],
    result_hosts: [],
    result_roots: ['/srv/data'],
    data_classes: [],
    max_result_bytes: 4300,
    structured: { items: ['array'], count: ['number'] },
  };
  it('lists the facts in reach order with structuredContent keys sorted', () => {
    const facts = envelopeFacts(e);
    expect(facts.map((f) => f.label)[0]).toBe('Hosts in arguments');
    expect(facts.find((f) => f.label === 'structuredContent')?.values).toEqual(['count: number', 'items: array']);
  });
  it('rates errors and sizes for people', () => {
    expect(errorRate(e)).toBe(15);
    expect(errorRate({ ...e, calls: 0, errors: 0 })).toBe(0);
    expect(bytesLabel(512)).toBe('512 B');
    expect(bytesLabel(4300)).toBe('4.2 KiB');
    expect(bytesLabel(3 * 1024 * 1024)).toBe('3.0 MiB');
  });
});
