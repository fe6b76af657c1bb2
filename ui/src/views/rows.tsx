// Fixed-height rows shared by the inbox and the lists.
import type { InboxItem, PlanSummary, ServerSummary } from '../lib/api';
import { href } from '../lib/router';
import { RiskBadge, Status, Time } from '../components/ui';
import { serverRisk } from '../lib/serverReview';

export function itemKey(i: InboxItem): string {
  return i.kind === 'plan' ? `plan:${i.plan_id}` : `server:${i.name}`;
}

export function itemHref(i: InboxItem): string {
  return i.kind === 'plan' ? href.plan(i.plan_id) : href.server(i.name);
}

export function PlanRow({ p, selected, fresh, member }: { p: PlanSummary; selected: boolean; fresh?: boolean; member?: boolean }) {
  const key = `plan:${p.plan_id}`;
  return (
    <a
      class={`row${selected ? ' selected' : ''}${fresh ? ' fresh' : ''}${member ? ' member' : ''}`}
      href={href.plan(p.plan_id)}
      data-key={key}
      data-testid="row"
    >
      <span class={`bar risk-${p.risk}`} />
      <span class="kind" title="Plan">
        ▤
      </span>
      <span class="main-col">
        <div class="t">{p.title}</div>
        <div class="s">
          <span class="mono">{p.plan_id}</span> · revision {p.revision} · {p.proposer}
        </div>
      </span>
      <span class="col w-badge">
        <RiskBadge risk={p.risk} label="Risk" />
      </span>
      <span class="col w-status">
        <Status status={p.status} />
      </span>
      <span class="time">
        <Time unix={p.updated_at} />
      </span>
    </a>
  );
}

export function serverLine(s: ServerSummary): string {
  const parts: string[] = [];
  if (s.status === 'PENDING')
    parts.push(`new server: nothing served until approved${s.risk ? ` · first-contact scan: ${s.risk} risk` : ''}`);
  else if (s.status === 'QUARANTINED') parts.push('quarantined: nothing served');
  if (s.blocked_tools?.length) parts.push(`${s.blocked_tools.length} tool${s.blocked_tools.length > 1 ? 's' : ''} held: ${s.blocked_tools.map((b) => b.tool).join(', ')}`);
  if (s.blocked_content?.length)
    parts.push(`${s.blocked_content.length} prompt/resource${s.blocked_content.length > 1 ? 's' : ''} held: ${s.blocked_content.map((b) => b.key).join(', ')}`);
  if (s.drift_count) parts.push(`${s.drift_count} drift${s.drift_count > 1 ? 's' : ''}`);
  if (s.tools !== undefined) parts.push(`${s.served_tools ?? 0}/${s.tools} tools served`);
  return parts.join(' · ');
}

export function ServerInboxRow({ s, selected, fresh }: { s: ServerSummary; selected: boolean; fresh?: boolean }) {
  const { risk, label } = serverRisk(s);
  return (
    <a class={`row${selected ? ' selected' : ''}${fresh ? ' fresh' : ''}`} href={href.server(s.name)} data-key={`server:${s.name}`} data-testid="row">
      <span class={`bar risk-${risk ?? 'none'}`} />
      <span class="kind" title="MCP server">
        ⛁
      </span>
      <span class="main-col">
        <div class="t">
          Server <span class="mono">{s.name}</span>
        </div>
        <div class="s">{serverLine(s)}</div>
      </span>
      <span class="col w-badge">
        {risk ? <RiskBadge risk={risk} label={label} /> : <span class="faint" style={{ fontSize: '12px' }}>no drift</span>}
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
