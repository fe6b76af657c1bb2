// Effort in proportion to risk (issue 46 item 1): which items ask for a typed
// reason, and what their decision dialog shows — a held call's tool and exact
// arguments (from the plan the gateway builds for it), a plan's stages and the
// size of its change, a tool's own risk.
import { describe, expect, it } from 'vitest';
import fixture from './fixtures/first-contact-server.json';
import type { PlanDocument, ServerDetail } from '../../src/lib/api';
import { asksForReason, compactJson, diffSummary, heldCall, stageLines } from '../../src/lib/effort';
import { toolRisk } from '../../src/lib/serverReview';

/** A held call's plan as crates/interlock-gateway/src/agent/calls/held.rs builds it. */
const heldDoc: PlanDocument = {
  schema_version: 'interlock.plan/v1',
  plan_id: 'call-29832ee04463-415a133f',
  title: 'Held tool call: calm__odd',
  proposer: 'agent:reader-bot',
  created_at: '2026-12-06T15:00:00Z',
  description: 'Agent `reader-bot` called `calm__odd`; the gateway held it: risk high is above role `reader`’s limit (low). Risk high (score 80).',
  body: {
    stages: [
      {
        id: 'call',
        action: 'mcp.call_tool',
        target: 'calm',
        params: { tool: 'odd', arguments: { path: '/etc/shadow', lines: [1, 2, 3] } },
        preconditions: [{ probe: 'mcp.tool_pinned', params: { tool: 'odd', tool_hash: `sha256:${'a'.repeat(64)}` } }],
        rollback: 'The gateway cannot undo a tool call; undo its effect by hand if needed.',
      },
    ],
  },
};

describe('effort in proportion to risk', () => {
  it('asks for a typed reason on high and critical items only', () => {
    expect(['low', 'medium', 'high', 'critical', 'info', null, undefined].map(asksForReason)).toEqual([
      false,
      false,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it('reads a held call’s tool and exact arguments from its plan', () => {
    expect(heldCall(heldDoc)).toEqual({
      kind: 'call',
      exposed: 'calm__odd',
      server: 'calm',
      tool: 'odd',
      arguments: { path: '/etc/shadow', lines: [1, 2, 3] },
      why: heldDoc.description,
    });
    // Any other plan is not a call.
    const other = { ...heldDoc, body: { stages: [{ ...heldDoc.body.stages[0], action: 'cmd.run' }] } };
    expect(heldCall(other)).toBeNull();
    expect(heldCall(null)).toBeNull();
  });

  it('lists a plan’s stages as one line each, object targets by kind and id, params as one line of JSON', () => {
    expect(
      stageLines([
        { id: 'restart', action: 'cmd.run', target: 'systemctl', params: { timeout_ms: 30000, argv: ['systemctl', 'restart', 'web'] } },
        { id: 'scale', action: 'k8s.scale', target: { kind: 'deployment', id: 'web', replicas: 3 }, params: {} },
      ]),
    ).toEqual([
      { id: 'restart', action: 'cmd.run', target: 'systemctl', params: '{ "argv": ["systemctl", "restart", "web"], "timeout_ms": 30000 }' },
      { id: 'scale', action: 'k8s.scale', target: 'deployment web', params: null },
    ]);
  });

  it('counts a unified diff’s added and removed lines, not its file headers', () => {
    const diff = '--- revision 1\n+++ revision 2\n@@ -1,2 +1,3 @@\n-rotate 7\n+rotate 14\n+compress\n same\n';
    expect(diffSummary(diff)).toEqual({ added: 2, removed: 1 });
    expect(diffSummary(null)).toBeNull();
  });

  it('prints arguments compactly: short arrays and objects on one line, keys sorted', () => {
    expect(compactJson({ path: '/etc/shadow', lines: [1, 2, 3] })).toBe('{ "lines": [1, 2, 3], "path": "/etc/shadow" }');
    const long = { query: 'x'.repeat(50), opts: { limit: 10, tags: ['a', 'b'] } };
    expect(compactJson(long)).toBe(`{\n  "opts": { "limit": 10, "tags": ["a", "b"] },\n  "query": "${'x'.repeat(50)}"\n}`);
    // The same value as JSON reads it back.
    expect(JSON.parse(compactJson(long))).toEqual(long);
    expect(compactJson({})).toBe('{}');
    expect(compactJson('a\nb')).toBe('"a\\nb"');
  });

  it('takes a tool’s risk from its drift, or from the first-contact scan while its server is pending', () => {
    const pending = fixture as unknown as ServerDetail;
    expect(pending.server.status).toBe('PENDING');
    expect(toolRisk(pending, 'greet')).toBe(pending.first_contact!.risk);
    expect(toolRisk(pending, 'add')).toBeNull();
    const drifted: ServerDetail = {
      ...pending,
      server: { ...pending.server, status: 'TRUSTED' },
      drift: [
        { tool: 'greet', kind: 'description_changed', severity: 'medium', action: 'monitor', scope: 'tool', summary: '', findings: [] },
        { tool: 'greet', kind: 'schema_changed', severity: 'high', action: 'hold', scope: 'tool', summary: '', findings: [] },
        { tool: 'add', kind: 'description_changed', severity: 'info', action: 'monitor', scope: 'tool', summary: '', findings: [] },
      ],
    };
    // Not pending any more: the scan no longer speaks, the worst drift does.
    expect(toolRisk(drifted, 'greet')).toBe('high');
    expect(toolRisk(drifted, 'add')).toBeNull();
  });
});
