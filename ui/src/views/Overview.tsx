// The overview (issue 18 item 4): what waits now and what was decided today;
// tool calls, holds and blocks over time, per server and per agent; each
// agent's shadow-mode would-block rate. One request (GET /api/v1/overview),
// counted by the store in SQL.

import { useMemo, useState } from 'preact/hooks';
import { api, type Overview as Data, type OverviewSeries } from '../lib/api';
import { useLive, useResource } from '../lib/hooks';
import { href } from '../lib/router';
import { Chart, PALETTE, type Line } from '../components/Chart';
import { endOfLocalDay } from '../lib/chart';
import { ErrorBanner, SkeletonBlock } from '../components/ui';

type Span = '24h' | '7d' | '30d';
const SPANS: Record<Span, { label: string; seconds: number; bucket: number }> = {
  '24h': { label: '24 hours', seconds: 86_400, bucket: 3_600 },
  '7d': { label: '7 days', seconds: 7 * 86_400, bucket: 6 * 3_600 },
  '30d': { label: '30 days', seconds: 30 * 86_400, bucket: 86_400 },
};

function localMidnight(): number {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  return Math.floor(d.getTime() / 1000);
}

function Stat({ label, value, testid, h }: { label: string; value: number | string; testid: string; h?: string }) {
  const body = (
    <>
      <div class="l">{label}</div>
      <div class="v" data-testid={testid}>
        {value}
      </div>
    </>
  );
  return h ? (
    <a class="stat overview-stat" href={h}>
      {body}
    </a>
  ) : (
    <div class="stat overview-stat">{body}</div>
  );
}

function perName(list: OverviewSeries[], pick: (s: OverviewSeries) => number[]): Line[] {
  return list
    .slice()
    .sort((a, b) => b.calls - a.calls)
    .slice(0, PALETTE.length)
    .map((s, i) => ({ label: s.name || '(none)', values: pick(s), color: PALETTE[i] }));
}

function pct(r: number | null): string {
  return r === null ? '—' : `${(r * 100).toFixed(r < 0.1 && r > 0 ? 1 : 0)} %`;
}

export function Overview() {
  const [span, setSpan] = useState<Span>(() => (sessionStorage.getItem('interlock.overviewSpan') as Span) || '7d');
  const res = useResource(() => {
    const s = SPANS[span];
    return api.overview(Math.floor(Date.now() / 1000) - s.seconds, s.bucket, localMidnight());
  }, [span]);
  useLive(() => true, res.reload);
  const d: Data | undefined = res.data;
  // On a span of days, the charts run to the end of today (today is a day's
  // width, not a sliver at the edge); over 24 hours, to the end of this hour.
  const xEnd = useMemo(() => (span === '24h' ? undefined : endOfLocalDay()), [span, d]);
  const spanLabel = `last ${SPANS[span].label}`;
  const charts = useMemo(() => {
    if (!d) return null;
    return {
      all: [
        { label: 'calls', values: d.all.series.calls, color: PALETTE[0] },
        { label: 'held', values: d.all.series.holds, color: PALETTE[1] },
        { label: 'blocked', values: d.all.series.blocks, color: PALETTE[2] },
      ],
      servers: perName(d.servers, (s) => s.series.calls),
      agents: perName(d.agents, (s) => s.series.calls),
      heldBlocked: perName(d.servers, (s) => s.series.holds.map((h, i) => h + s.series.blocks[i])),
    };
  }, [d]);
  return (
    <div class="page">
      <div class="page-head">
        <div>
          <h1>Overview</h1>
          <div class="sub">What waits, what was decided today, and what agents did.</div>
        </div>
      </div>
      {res.error && <ErrorBanner error={res.error} onRetry={res.reload} />}
      <div class="overview-stats" data-testid="overview-stats">
        <Stat label="Held for review now" value={d?.held ?? '…'} testid="stat-held" h={href.inbox()} />
        <Stat label="Quarantined servers" value={d?.quarantined ?? '…'} testid="stat-quarantined" h={href.servers()} />
        <Stat label="Decided today" value={d?.decided_today ?? '…'} testid="stat-decided" h={href.receipts()} />
        <Stat label="Calls today" value={d ? `${d.calls_today}` : '…'} testid="stat-calls" />
        <Stat label="Calls held today" value={d?.held_calls_today ?? '…'} testid="stat-held-calls" />
      </div>
      <div class="filters" role="group" aria-label="Time span">
        {(Object.keys(SPANS) as Span[]).map((k) => (
          <button
            class={`filter${k === span ? ' on' : ''}`}
            data-span={k}
            onClick={() => {
              sessionStorage.setItem('interlock.overviewSpan', k);
              setSpan(k);
            }}
          >
            {SPANS[k].label}
          </button>
        ))}
      </div>
      <div class="overview-grid">
        <div class="card">
          <div class="card-head">
            <h3>Calls, holds and blocks</h3>
          </div>
          <div class="card-body">{d && charts ? <Chart times={d.buckets} lines={charts.all} testid="chart-all" spanLabel={spanLabel} xEnd={xEnd} /> : <SkeletonBlock lines={6} />}</div>
        </div>
        <div class="card">
          <div class="card-head">
            <h3>Held or blocked, per server</h3>
          </div>
          <div class="card-body">{d && charts ? <Chart times={d.buckets} lines={charts.heldBlocked} testid="chart-held-server" spanLabel={spanLabel} xEnd={xEnd} /> : <SkeletonBlock lines={6} />}</div>
        </div>
        <div class="card">
          <div class="card-head">
            <h3>Calls per server</h3>
          </div>
          <div class="card-body">{d && charts ? <Chart times={d.buckets} lines={charts.servers} testid="chart-servers" spanLabel={spanLabel} xEnd={xEnd} /> : <SkeletonBlock lines={6} />}</div>
        </div>
        <div class="card">
          <div class="card-head">
            <h3>Calls per agent</h3>
          </div>
          <div class="card-body">{d && charts ? <Chart times={d.buckets} lines={charts.agents} testid="chart-agents" spanLabel={spanLabel} xEnd={xEnd} /> : <SkeletonBlock lines={6} />}</div>
        </div>
      </div>
      <div class="section-title">Agents</div>
      <div class="card">
        <table class="table overview-agents" data-testid="agents-table">
          <thead>
            <tr>
              <th>Agent</th>
              <th class="num">Calls</th>
              <th class="num">Held</th>
              <th class="num">Blocked</th>
              <th class="num">Shadow-mode calls</th>
              <th>Would have been blocked</th>
            </tr>
          </thead>
          <tbody>
            {!d ? (
              <tr>
                <td colSpan={6}>
                  <SkeletonBlock lines={2} />
                </td>
              </tr>
            ) : d.agents.length === 0 ? (
              <tr>
                <td colSpan={6} class="faint">
                  No tool calls in this span.
                </td>
              </tr>
            ) : (
              d.agents.map((a) => (
                <tr data-testid="agent-row">
                  <td>{a.name || '(none)'}</td>
                  <td class="num">{a.calls}</td>
                  <td class="num">{a.holds}</td>
                  <td class="num">{a.blocks}</td>
                  <td class="num">{a.shadow_calls}</td>
                  <td>
                    <span class="rate">
                      <span class="rate-bar" style={{ width: `${Math.round((a.shadow_would_block_rate ?? 0) * 100)}%` }} />
                    </span>
                    <span data-testid="would-block-rate">{pct(a.shadow_would_block_rate)}</span>
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </div>
  );
}
