// The server review's first-contact findings and per-tool decisions, on what a
// real gateway answered (fixtures/first-contact-server.json) and on the
// `observed_tools` shape the per-tool buttons are feature-detected on.
import { describe, expect, it } from 'vitest';
import fixture from './fixtures/first-contact-server.json';
import held from './fixtures/held-tool-server.json';
import type { ServerDetail } from '../../src/lib/api';
import { decisionPath } from '../../src/lib/api';
import {
  blockedLabel,
  groupFindings,
  kindLabel,
  observedToolHashes,
  pointerTokens,
  serverRisk,
  toolActions,
  toolState,
} from '../../src/lib/serverReview';
import { splitToolSubject, subjectId, toolSubject } from '../../src/lib/statement';

const H = (c: string) => `sha256:${c.repeat(64)}`;

function detail(over: Partial<ServerDetail['server']>, extra: Partial<ServerDetail> = {}): ServerDetail {
  return {
    server: { name: 'calm', status: 'TRUSTED', configured: true, blocked_tools: [], ...over },
    subject: 'server:calm',
    policy_digest: H('b'),
    audience: 'interlock.local/log',
    baseline: null,
    observed: { instructions: null, tools: [{ name: 'add' }, { name: 'greet' }] },
    drift: [],
    ...extra,
  };
}

describe('first-contact findings', () => {
  it('groups a real gateway’s findings by tool, sorted by field and kind', () => {
    const groups = groupFindings(fixture.first_contact as ServerDetail['first_contact'], ['add', 'greet']);
    expect(groups.map((g) => g.tool)).toEqual(['greet']);
    expect(groups[0].findings.map((f) => f.kind)).toEqual([
      'coerced_step',
      'imperative_tag',
      'imperative_tag',
      'sensitive_path',
      'sensitive_path',
    ]);
    expect(groups[0].findings.every((f) => f.field === '/inputSchema/properties/name/description')).toBe(true);
    expect(groups[0].findings.map((f) => f.excerpt)).toContain('id_rsa');
  });

  it('puts the server instructions first, then tools in the surface’s order, and drops exact repeats', () => {
    const f = (tool: string | null, field: string, kind = 'hidden_text', excerpt = 'x') => ({ tool, field, kind, excerpt });
    const groups = groupFindings(
      {
        risk: 'high',
        findings: [f('zeta', '/description'), f('alpha', '/description'), f(null, ''), f('zeta', '/description'), f('unknown', '/title')],
      },
      ['zeta', 'alpha'],
    );
    expect(groups.map((g) => [g.tool, g.findings.length])).toEqual([
      [null, 1],
      ['zeta', 1],
      ['alpha', 1],
      ['unknown', 1],
    ]);
    expect(groupFindings(null)).toEqual([]);
    expect(groupFindings({ risk: 'low', findings: [] })).toEqual([]);
  });

  it('reads JSON Pointers by RFC 6901 and refuses what is not one', () => {
    expect(pointerTokens('/inputSchema/properties/name/description')).toEqual(['inputSchema', 'properties', 'name', 'description']);
    expect(pointerTokens('/properties/a~1b/x~0y')).toEqual(['properties', 'a/b', 'x~y']);
    expect(pointerTokens('')).toEqual([]);
    expect(() => pointerTokens('inputSchema')).toThrow(/not a JSON Pointer/);
    expect(kindLabel('imperative_tag')).toBe('imperative tag');
  });

  it('leads a pending server with its first-contact risk, an approved one with its worst drift', () => {
    expect(serverRisk(fixture.server as ServerDetail['server'])).toEqual({ risk: 'critical', label: 'First-contact risk' });
    expect(serverRisk({ name: 'c', status: 'TRUSTED', configured: true, worst_severity: 'medium', risk: null })).toEqual({
      risk: 'medium',
      label: 'Worst drift',
    });
    expect(serverRisk({ name: 'c', status: 'PENDING', configured: true })).toEqual({ risk: null, label: 'Worst drift' });
  });
});

describe('per-tool decisions', () => {
  it('are offered on a real gateway’s observed_tools: Approve for the held tool, Block for every tool', () => {
    const d = held as unknown as ServerDetail;
    const m = observedToolHashes(d)!;
    expect([...m.keys()]).toEqual(d.observed!.tools.map((t) => t.name));
    expect(toolActions(d, 'greet')).toEqual({ hash: m.get('greet'), blocked: 'hold', approve: true, block: true });
    expect(toolActions(d, 'add')).toEqual({ hash: m.get('add'), blocked: null, approve: false, block: true });
    expect(toolState(d, 'add')).toBe('served');
    expect(toolState(d, 'greet')).toBe('not served');
    expect(toolState(fixture as unknown as ServerDetail, 'greet')).toBe('not served until the server is approved');
  });

  it('are not offered when the gateway gives no observed definition hashes (an older gateway)', () => {
    const d = fixture as unknown as ServerDetail;
    expect(observedToolHashes(d)).toBeNull();
    expect(toolActions(d, 'greet')).toEqual({ hash: null, blocked: null, approve: false, block: false });
  });

  it('take the hash from observed_tools and ignore malformed entries', () => {
    const d = detail({}, { observed_tools: [{ name: 'add', definition_hash: H('1') }, { name: 'greet', definition_hash: 'md5:nope' }] });
    const m = observedToolHashes(d)!;
    expect([...m]).toEqual([['add', H('1')]]);
    expect(toolActions(d, 'greet').hash).toBeNull();
  });

  it('offer Block while pending, Approve only for a held, quarantined or blocked tool of an approved server', () => {
    const tools = [
      { name: 'add', definition_hash: H('1') },
      { name: 'greet', definition_hash: H('2') },
      { name: 'odd', definition_hash: H('3') },
    ];
    const pending = detail({ status: 'PENDING' }, { observed_tools: tools });
    expect(toolActions(pending, 'greet')).toEqual({ hash: H('2'), blocked: null, approve: false, block: true });

    const blocked = [
      { tool: 'greet', action: 'hold', why: '[medium] new instruction' },
      { tool: 'odd', action: 'block', why: 'blocked by human:r' },
    ];
    const trusted = detail({ status: 'TRUSTED', blocked_tools: blocked }, { observed_tools: tools });
    expect(toolActions(trusted, 'add')).toEqual({ hash: H('1'), blocked: null, approve: false, block: true });
    expect(toolActions(trusted, 'greet')).toEqual({ hash: H('2'), blocked: 'hold', approve: true, block: true });
    expect(toolActions(trusted, 'odd')).toEqual({ hash: H('3'), blocked: 'block', approve: true, block: false });

    const quarantined = detail({ status: 'QUARANTINED', blocked_tools: [{ tool: 'greet', action: 'quarantine', why: 'x' }] }, { observed_tools: tools });
    expect(toolActions(quarantined, 'greet').approve).toBe(true);

    const rejected = detail({ status: 'REJECTED' }, { observed_tools: tools });
    expect(toolActions(rejected, 'add')).toMatchObject({ approve: false, block: false });
    expect(blockedLabel('block')).toBe('blocked by reviewer');
    expect(blockedLabel('hold')).toBe('held');
  });

  it('name tool:<server>/<tool> and post to the tool’s decisions endpoint', () => {
    const subject = toolSubject('calm', 'greet');
    expect(subject).toBe('calm/greet');
    expect(subjectId('tool', subject)).toBe('tool:calm/greet');
    expect(subjectId('server', 'calm')).toBe('server:calm');
    expect(subjectId('plan', 'rotate-logs')).toBe('rotate-logs');
    // A tool name may hold '/': the server name never does, so the first one splits.
    expect(splitToolSubject('calm/fs/read')).toEqual({ server: 'calm', tool: 'fs/read' });
    expect(subjectId('tool', toolSubject('calm', 'fs/read'))).toBe('tool:calm/fs/read');
    expect(decisionPath('tool', 'calm/fs/read')).toBe('/api/v1/servers/calm/tools/fs%2Fread/decisions');
    expect(decisionPath('server', 'calm')).toBe('/api/v1/servers/calm/decisions');
    expect(decisionPath('plan', 'a b')).toBe('/api/v1/plans/a%20b/decisions');
    expect(() => toolSubject('a/b', 'x')).toThrow(/not a server name/);
    expect(() => toolSubject('a', '')).toThrow(/tool name/);
    expect(() => splitToolSubject('nothing')).toThrow(/not a <server>\/<tool>/);
  });
});
