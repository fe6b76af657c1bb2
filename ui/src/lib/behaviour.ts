// What the server review shows of a server's behaviour (issue 16 items 1
// and 2): its effective-permission probes and each tool's learned envelope.
// Pure functions of the API's answers, so they are unit-tested.

import type { Envelope, ProbeFinding, ProbeRun, ProbesView } from './api';

/** How a probe stands, for its badge: as expected, beyond it (power grew), short of it, or unknown. */
export type ProbeStanding = 'ok' | 'grew' | 'narrowed' | 'unknown';

export interface ProbeRow {
  tool: string;
  argumentsHash: string;
  /** The last run's outcome. */
  outcome: ProbeRun['outcome'];
  /** The outcome adopted at approval, if any. */
  baseline: ProbeRun['outcome'] | null;
  standing: ProbeStanding;
  /** The finding about this probe, when it departs. */
  finding: ProbeFinding | null;
}

const standingOf = (run: ProbeRun, finding: ProbeFinding | null): ProbeStanding => {
  if (finding) {
    if (finding.action === 'quarantine') return 'grew';
    if (finding.kind === 'narrowed') return 'narrowed';
    return 'unknown';
  }
  if (run.verdict === 'exceeded') return 'grew';
  if (run.verdict === 'narrowed') return 'narrowed';
  if (run.verdict === 'inconclusive') return 'unknown';
  return 'ok';
};

/**
 * One row per probe of the last run, with its baseline outcome and the
 * finding about it (matched by tool and arguments hash, as the gateway
 * matches them). Rows that grew come first: they quarantined the server.
 */
export function probeRows(view: ProbesView | null | undefined): ProbeRow[] {
  if (!view) return [];
  const same = (a: { tool: string; arguments_hash: string }, b: { tool: string; arguments_hash: string }) =>
    a.tool === b.tool && a.arguments_hash === b.arguments_hash;
  const rank: Record<ProbeStanding, number> = { grew: 0, narrowed: 1, unknown: 2, ok: 3 };
  return view.observed
    .map((run) => {
      const finding = view.findings.find((f) => same(f, run)) ?? null;
      const base = view.baseline?.find((b) => same(b, run)) ?? null;
      return {
        tool: run.tool,
        argumentsHash: run.arguments_hash,
        outcome: run.outcome,
        baseline: base?.outcome ?? null,
        standing: standingOf(run, finding),
        finding,
      };
    })
    .sort((a, b) => rank[a.standing] - rank[b.standing] || (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
}

/** A byte count for people: 512 B, 4.0 KiB, 1.5 MiB. */
export function bytesLabel(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** One fact of an envelope, as shown: a label and its values (empty: "none seen"). */
export interface EnvelopeFact {
  label: string;
  values: string[];
}

/** The facts a reviewer reads of an envelope, in the order they matter for reach. */
export function envelopeFacts(e: Envelope): EnvelopeFact[] {
  const structured = Object.entries(e.structured ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, types]) => `${k}: ${types.join(' | ')}`);
  return [
    { label: 'Hosts in arguments', values: e.arg_hosts },
    { label: 'Path roots in arguments', values: e.arg_roots },
    { label: 'Hosts in results', values: e.result_hosts },
    { label: 'Path roots in results', values: e.result_roots },
    { label: 'Data classes in results', values: e.data_classes },
    { label: 'structuredContent', values: structured },
  ];
}

/** The error rate of the calls learned, as a percentage (0 when no call yet). */
export function errorRate(e: Envelope): number {
  return e.calls === 0 ? 0 : Math.round((100 * e.errors) / e.calls);
}
