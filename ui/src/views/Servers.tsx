import { useState } from 'preact/hooks';
import { api, type ServerRequest, type ServerSummary } from '../lib/api';
import { decide, markActed } from '../lib/decide';
import { monitoredDrift } from '../lib/monitored';
import { reasonError } from '../lib/statement';
import { Modal } from '../components/Dialog';
import { toast } from '../components/Toasts';
import { useListNav, useLive, useResource, useTick } from '../lib/hooks';
import { go, href } from '../lib/router';
import { Empty, ErrorBanner, Icon, RiskBadge, SkeletonRows, Status, Time } from '../components/ui';
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
        {(s.link?.stale_listings?.length ?? 0) > 0 && (
          <span
            class="muted"
            title={s.link!.stale_listings!.map((l) => `${l.method}: ${l.error}`).join('\n')}
          >
            {' '}
            · stale listing
          </span>
        )}
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

/**
 * Accepts monitor-level drift on several servers at once: one reason, one
 * signed statement per server, each about the observed hash the list showed
 * (a server whose surface moved again since is left for its own review).
 */
function AcceptDriftDialog({ servers, onClose, onDone }: { servers: ServerSummary[]; onClose: () => void; onDone: () => void }) {
  const [reason, setReason] = useState('Reviewed the monitored drift; the new surfaces are fine.');
  const [busy, setBusy] = useState(false);
  const [results, setResults] = useState<Record<string, string>>({});
  const run = async (e?: Event) => {
    e?.preventDefault();
    if (busy) return;
    const bad = reasonError(reason);
    if (bad) return toast(bad, 'bad');
    setBusy(true);
    let accepted = 0;
    for (const s of servers) {
      try {
        const shown = await api.server(s.name);
        if (shown.server.observed_hash !== s.observed_hash) {
          setResults((r) => ({ ...r, [s.name]: 'changed since shown: review it alone' }));
          continue;
        }
        markActed('server', s.name);
        await decide({
          kind: 'server',
          subject: s.name,
          hash: s.observed_hash!,
          policyDigest: shown.policy_digest,
          audience: shown.audience,
          decision: 'approve',
          reason,
        });
        accepted++;
        setResults((r) => ({ ...r, [s.name]: 'accepted' }));
      } catch (err) {
        setResults((r) => ({ ...r, [s.name]: (err as Error).message }));
      }
    }
    setBusy(false);
    toast(`Accepted the drift of ${accepted} of ${servers.length} server${servers.length === 1 ? '' : 's'}`, accepted === servers.length ? 'ok' : 'bad');
    if (accepted === servers.length) onDone();
  };
  return (
    <Modal label="Accept monitored drift" title={`Accept the monitored drift of ${servers.length} server${servers.length === 1 ? '' : 's'}?`} onClose={() => !busy && onClose()}>
      <form onSubmit={run}>
        <div class="body">
          <div class="summary" data-testid="bulk-drift">
            {servers.map((s) => (
              <div class="row-gap" key={s.name} style={{ justifyContent: 'space-between' }}>
                <span class="mono">{s.name}</span>
                <span class="mono faint" style={{ fontSize: '11.5px' }} title={s.observed_hash ?? ''}>
                  {s.observed_hash?.slice(0, 19)}…
                </span>
                <span class="muted" style={{ fontSize: '12px', minWidth: '140px', textAlign: 'right' }} data-result={s.name}>
                  {results[s.name] ?? `${s.drift_count ?? 0} drift${s.drift_count === 1 ? '' : 's'} · ${s.worst_severity ?? '—'}`}
                </span>
              </div>
            ))}
          </div>
          <label for="bulk-reason">Reason</label>
          <input id="bulk-reason" type="text" value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} autocomplete="off" />
          <div class="help">
            Each server’s listed surface becomes its approved baseline: one signed statement per server, about exactly
            the hash shown here. Nothing was held by these drifts; their tools stayed served.
          </div>
        </div>
        <div class="foot">
          <button type="button" class="btn" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" class="btn primary" disabled={busy} data-testid="bulk-accept">
            {busy ? 'Signing…' : `Accept ${servers.length} and sign`}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/**
 * Programs reviewers asked to run (issue 39): a stdio server runs as the
 * gateway's user, so only the machine's owner starts one, from its terminal.
 * Shown with the exact command line so the owner reads what they confirm.
 */
function RequestedPrograms({ requests }: { requests: ServerRequest[] }) {
  if (!requests.length) return null;
  return (
    <div class="banner warn" data-testid="server-requests" style={{ marginBottom: '14px' }}>
      <Icon name="alert" />
      <div style={{ flex: 1 }}>
        <b>
          {requests.length === 1 ? 'A program waits' : `${requests.length} programs wait`} for the machine’s owner
        </b>
        <span>
          A stdio server runs a program on this machine, so a reviewer can only ask for one. Nothing runs until the
          owner confirms it in a terminal on the gateway’s machine.
        </span>
        {requests.map((r) => {
          const line = [r.server.command ?? '', ...(r.server.args ?? [])].join(' ');
          return (
            <div class="row-gap" key={r.server.name} data-testid="server-request" style={{ marginTop: '8px', alignItems: 'baseline' }}>
              <span class="mono" style={{ fontWeight: 600 }}>
                {r.server.name}
              </span>
              <code class="mono" data-testid="request-command" style={{ wordBreak: 'break-all' }}>
                {line}
              </code>
              <span class="muted" style={{ fontSize: '12px' }}>
                asked by {r.requested_by} · <Time unix={r.requested_at} />
              </span>
              <code class="mono faint" style={{ fontSize: '12px' }}>
                interlock servers confirm {r.server.name}
              </code>
            </div>
          );
        })}
      </div>
    </div>
  );
}

export function Servers() {
  useTick();
  const res = useResource(() => api.servers(), []);
  const requests = useResource(() => api.serverRequests(), []);
  useLive(
    (e) => e.subject_kind === 'server',
    () => {
      res.reload();
      requests.reload();
    },
  );
  const servers = [...(res.data?.servers ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  const nav = useListNav(
    servers.map((s) => s.name),
    (k) => go(href.server(k)),
  );
  const monitored = monitoredDrift(servers);
  const [bulk, setBulk] = useState<ServerSummary[] | null>(null);
  return (
    <div class="page">
      <div class="page-head">
        <div>
          <h1>Servers</h1>
          <div class="sub">Upstream MCP servers behind the gateway, and what of them is served.</div>
        </div>
        <div class="actions">
          <button
            class="btn"
            disabled={!monitored.length}
            onClick={() => setBulk(monitored)}
            data-testid="accept-monitored"
            title="Servers still served whose surface moved only in ways the drift policy records"
          >
            Accept monitored drift{monitored.length ? ` (${monitored.length})` : ''}
          </button>
        </div>
      </div>
      {bulk && (
        <AcceptDriftDialog
          servers={bulk}
          onClose={() => setBulk(null)}
          onDone={() => {
            setBulk(null);
            res.reload();
          }}
        />
      )}
      <RequestedPrograms requests={requests.data?.requests ?? []} />
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
