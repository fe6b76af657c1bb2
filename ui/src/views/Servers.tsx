import { api, type ServerSummary } from '../lib/api';
import { useListNav, useLive, useResource, useTick } from '../lib/hooks';
import { go, href } from '../lib/router';
import { Empty, ErrorBanner, RiskBadge, SkeletonRows, Status, Time } from '../components/ui';
import { serverRisk } from '../lib/serverReview';

function ServerRow({ s, selected }: { s: ServerSummary; selected: boolean }) {
  const blocked = s.blocked_tools?.length ?? 0;
  const lead = serverRisk(s);
  return (
    <a class={`row${selected ? ' selected' : ''}`} href={href.server(s.name)} data-key={s.name} data-testid="row">
      <span class={`bar risk-${lead.risk ?? 'none'}`} />
      <span class="kind">⛁</span>
      <span class="main-col">
        <div class="t mono">{s.name}</div>
        <div class="s" title={s.transport ?? ''}>
          {s.transport ?? 'not configured'}
        </div>
      </span>
      <span class="col w-link">
        <span class={`dot ${s.link?.state ?? ''}`} />
        {s.link?.state ?? '—'}
      </span>
      <span class="col w-tools">
        {s.tools !== undefined ? `${s.served_tools ?? 0}/${s.tools} served` : '—'}
        {blocked > 0 && <span style={{ color: 'var(--medium-fg)' }}> · {blocked} held</span>}
      </span>
      <span class="col w-drift">
        {s.drift_count ? (
          <>
            <RiskBadge risk={s.worst_severity} label="Worst drift" />
            <span class="muted" style={{ fontSize: '12.5px' }}>
              {s.drift_count} drift{s.drift_count > 1 ? 's' : ''}
            </span>
          </>
        ) : s.status === 'PENDING' && lead.risk ? (
          <>
            <RiskBadge risk={lead.risk} label={lead.label} />
            <span class="muted" style={{ fontSize: '12.5px' }}>
              first contact
            </span>
          </>
        ) : (
          <span class="faint" style={{ fontSize: '12.5px' }}>
            no drift
          </span>
        )}
      </span>
      <span class="col w-status">
        <Status status={s.status} />
      </span>
      <span class="time">
        <Time unix={s.updated_at} />
      </span>
    </a>
  );
}

export function Servers() {
  useTick();
  const res = useResource(() => api.servers(), []);
  useLive((e) => e.subject_kind === 'server', res.reload);
  const servers = [...(res.data?.servers ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  const nav = useListNav(
    servers.map((s) => s.name),
    (k) => go(href.server(k)),
  );
  return (
    <div class="page">
      <div class="page-head">
        <div>
          <h1>Servers</h1>
          <div class="sub">Upstream MCP servers behind the gateway, and what of them is served.</div>
        </div>
      </div>
      {res.error && <ErrorBanner error={res.error} onRetry={res.reload} />}
      {!(res.error && !res.data) && (
      <div class="list" data-testid="servers">
        <div class="list-head">
          <span style={{ width: '28px' }} />
          <span style={{ flex: 1 }}>Server</span>
          <span style={{ width: '110px' }}>Link</span>
          <span style={{ width: '150px' }}>Tools</span>
          <span style={{ width: '150px' }}>Drift</span>
          <span style={{ width: '112px' }}>Status</span>
          <span style={{ width: '76px', textAlign: 'right' }}>Updated</span>
        </div>
        {!res.data ? (
          <SkeletonRows n={4} cols={4} />
        ) : servers.length === 0 ? (
          <Empty title="No servers configured">Add [servers.NAME] sections to the gateway configuration.</Empty>
        ) : (
          servers.map((s) => <ServerRow key={s.name} s={s} selected={nav.selected === s.name} />)
        )}
      </div>
      )}
    </div>
  );
}
