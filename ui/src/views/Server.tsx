import { useEffect, useState } from 'preact/hooks';
import { api, type ServerDetail, type Tool } from '../lib/api';
import { useLive, useResource, useTick } from '../lib/hooks';
import { href } from '../lib/router';
import type { SurfaceDiff } from '../lib/surfaceDiff';
import { DecisionButtons, useDecision } from '../components/Decision';
import { DecisionDialog, type DecisionTarget } from '../components/Dialog';
import { toast } from '../components/Toasts';
import { toolSubject, type DecisionKind } from '../lib/statement';
import {
  blockedLabel,
  groupFindings,
  kindLabel,
  observedToolHashes,
  serverRisk,
  toolActions,
  toolRisk,
  toolState,
  type ToolActions,
} from '../lib/serverReview';
import type { DecisionContext } from '../lib/effort';
import { DiffView, LayoutToggle, useDiffLayout } from '../components/Diff';
import { BehaviourPanel } from './ServerBehaviour';
import { RemoveServer } from '../components/RemoveServer';
import { LaunchPanel } from '../components/LaunchPanel';
import { ErrorBanner, Hash, Icon, pretty, RiskBadge, SkeletonBlock, Status, Ticked, Time } from '../components/ui';
import { plural } from '../components/ui';

/** How many monospace columns one side of the diff shows without scrolling. */
function useDiffColumns(layout: string): number {
  const measure = () => {
    const page = document.querySelector<HTMLElement>('.page');
    const w = (page?.clientWidth ?? 1200) - 64;
    const side = layout === 'side-by-side' ? w / 2 : w;
    // 12.5px monospace ≈ 7.6px a column; minus line numbers, +/- marker and padding.
    return Math.max(32, Math.min(160, Math.floor((side - 100) / 7.6)));
  };
  const [cols, setCols] = useState(measure);
  useEffect(() => {
    const f = () => setCols(measure());
    f();
    window.addEventListener('resize', f);
    return () => window.removeEventListener('resize', f);
  }, [layout]);
  return cols;
}

/**
 * What a server (or one of its tools) is decided on, for the dialog (issue 46):
 * its drift with the diff's summary and a changed launch, else a pending
 * server's first-contact findings; null when there is nothing to show.
 */
function serverContext(d: ServerDetail, diff: SurfaceDiff | null, tool?: string): DecisionContext | null {
  const drift = tool === undefined ? d.drift : d.drift.filter((x) => x.tool === tool);
  const launch = tool === undefined ? d.server.launch?.changed ?? [] : [];
  if (drift.length || launch.length)
    return { kind: 'drift', drift, changed: diff?.changed.filter((t) => tool === undefined || t === tool), launch };
  const findings = (d.server.status === 'PENDING' ? d.first_contact?.findings ?? [] : []).filter(
    (f) => tool === undefined || f.tool === tool,
  );
  if (!findings.length) return null;
  const order = d.observed?.tools.map((t) => t.name) ?? [];
  return { kind: 'findings', findings: groupFindings({ risk: d.first_contact!.risk, findings }, order).flatMap((g) => g.findings) };
}

function canApprove(d: ServerDetail | undefined): boolean {
  const s = d?.server;
  if (!s || !s.observed_hash || s.status === 'UNSEEN') return false;
  // A reviewer's block is lifted per tool (approving the server keeps it).
  return (
    s.status !== 'TRUSTED' ||
    s.observed_hash !== s.baseline_hash ||
    (s.blocked_tools ?? []).some((b) => b.action !== 'block') ||
    (s.blocked_content ?? []).length > 0
  );
}

/**
 * What the first-contact scan found in a pending server's surface, by tool:
 * where (a JSON Pointer into the tool), what kind, and the words themselves.
 */
function FirstContactPanel({ d }: { d: ServerDetail }) {
  const fc = d.first_contact;
  if (!fc) return null;
  const groups = groupFindings(fc, d.observed?.tools.map((t) => t.name) ?? []);
  const n = groups.reduce((k, g) => k + g.findings.length, 0);
  return (
    <>
      <div class="section-title">First-contact scan</div>
      <div class="card first-contact" data-testid="first-contact" data-risk-level={fc.risk} data-nav>
        <div class="card-head">
          <RiskBadge risk={fc.risk} label="First-contact risk" />
          <h3 data-testid="first-contact-summary">
            {n === 0
              ? 'Nothing suspicious in its descriptions, parameters or instructions'
              : `${plural(n, 'finding')} in ${plural(groups.length, 'place')} — read them before approving`}
          </h3>
        </div>
        {(fc.power ?? []).length > 0 && (
          <div class="fc-group" data-testid="fc-power">
            <div class="fc-tool">
              What its tools can do <span class="faint">part of the risk, whatever the wording says</span>
            </div>
            <ul class="fc-list">
              {(fc.power ?? []).map((p) => (
                <li data-testid="fc-power-tool" data-risk={p.risk}>
                  <b class="mono">{p.tool}</b>
                  <RiskBadge risk={p.risk} label="What it can do" />
                  <span class="fc-excerpt">{p.why}</span>
                </li>
              ))}
            </ul>
          </div>
        )}
        {groups.map((g) => (
          <div class="fc-group" data-testid="fc-group" data-fc-tool={g.tool ?? ''}>
            <div class="fc-tool">
              {g.tool === null ? (
                g.findings.every((f) => f.field === 'instructions') ? (
                  'Server instructions'
                ) : (
                  'Server instructions, prompts and resources'
                )
              ) : (
                <>
                  tool <b class="mono">{g.tool}</b>
                </>
              )}
              <span class="faint">{plural(g.findings.length, 'finding')}</span>
            </div>
            <ul class="fc-list">
              {g.findings.map((f) => (
                <li data-testid="fc-finding">
                  <code class="fc-field" title="JSON Pointer into the tool">
                    {f.field || '(whole)'}
                  </code>
                  <span class="chip">{kindLabel(f.kind)}</span>
                  <span class="fc-excerpt">“{f.excerpt}”</span>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </div>
    </>
  );
}

/** What is not served and why: one line per tool (or prompt, resource), nothing when empty. */
function BlockedList({
  title,
  testid,
  items,
}: {
  title: string;
  testid: string;
  items: { name: string; chipClass: string; chip: string; why: string }[];
}) {
  if (items.length === 0) return null;
  return (
    <>
      <div class="section-title">{title}</div>
      <div class="card">
        <ul class="inline-list" data-testid={testid}>
          {items.map((b) => (
            <li>
              <b class="mono">{b.name}</b>
              <span class={`chip ${b.chipClass}`}>{b.chip}</span>
              <span class="muted why">
                <Ticked text={b.why} />
              </span>
            </li>
          ))}
        </ul>
      </div>
    </>
  );
}

/** How many lines of a schema show before "Show all". */
const SCHEMA_LINES = 24;

/**
 * A tool's input schema: long lines wrap (nothing cut at the side), and a long
 * schema shows its first lines with a button for the rest (nothing cut below).
 */
function Schema({ text }: { text: string }) {
  const lines = text.split('\n');
  const [all, setAll] = useState(false);
  const long = lines.length > SCHEMA_LINES;
  return (
    <div class="schema">
      <pre class="block schema-json" data-testid="tool-schema">
        {long && !all ? lines.slice(0, SCHEMA_LINES).join('\n') + '\n…' : text}
      </pre>
      {long && (
        <button type="button" class="btn small ghost" onClick={() => setAll(!all)} aria-expanded={all} data-testid="schema-toggle">
          {all ? 'Show less' : `Show all ${lines.length} lines`}
        </button>
      )}
    </div>
  );
}

function ToolCard({
  t,
  actions,
  state,
  onDecide,
}: {
  t: Tool;
  actions: ToolActions;
  state: string;
  onDecide?: (k: DecisionKind) => void;
}) {
  const ann = t.annotations && Object.keys(t.annotations).length ? t.annotations : null;
  const blocked = actions.blocked;
  return (
    <div
      class={`tool-card${blocked ? ` blocked act-${blocked}` : ''}`}
      data-testid="tool"
      data-tool={t.name}
      data-blocked={blocked ?? ''}
      data-nav
    >
      <div class="name">
        <span class="tool-name" data-testid="tool-name">
          {t.name}
        </span>
        {onDecide && (
          <span class="tool-actions">
            <button
              class="btn small"
              disabled={!actions.approve}
              onClick={() => onDecide('approve')}
              data-testid="tool-approve"
              title="Approve this tool’s observed definition into the baseline (t)"
            >
              Approve tool
            </button>
            <button
              class="btn small danger"
              disabled={!actions.block}
              onClick={() => onDecide('reject')}
              data-testid="tool-block"
              title="Block this tool: it is not served until a reviewer approves it (b)"
            >
              Block
            </button>
          </span>
        )}
      </div>
      <div class="tool-state">
        {blocked ? (
          <span class={`chip act-${blocked}`} data-testid="tool-blocked">
            {blockedLabel(blocked)}
          </span>
        ) : (
          <span class="faint" data-testid="tool-state">
            {state}
          </span>
        )}
      </div>
      <p>{t.description ?? <span class="none">no description</span>}</p>
      {t.inputSchema !== undefined && <Schema text={pretty(t.inputSchema)} />}
      {ann && (
        <div class="row-gap" style={{ marginTop: '8px' }}>
          {Object.entries(ann).map(([k, v]) => (
            <span class="chip">
              {k}: {JSON.stringify(v)}
            </span>
          ))}
        </div>
      )}
    </div>
  );
}

function banner(d: ServerDetail) {
  const s = d.server;
  if (s.status === 'QUARANTINED')
    return (
      <div class="banner bad" role="alert">
        <Icon name="stop" />
        <div>
          <b>Quarantined: none of this server’s tools are served</b>
          <span>
            {(d.probes?.findings ?? []).some((f) => f.action === 'quarantine') && d.server.observed_hash === d.server.baseline_hash
              ? 'Its surface is unchanged, but a probe expected to be refused now succeeds: its behaviour reaches further than approved. Approving adopts the probes’ outcomes as the new baseline.'
              : s.launch?.changed?.length
                ? `How it is started changed since it was approved (${s.launch.changed.join(', ')}): it is not served on the old approval. Approving adopts the new launch and the observed surface.`
                : 'Its surface drifted in a way the policy quarantines. Approving makes the observed surface the new baseline.'}
          </span>
        </div>
      </div>
    );
  if (s.status === 'PENDING')
    return (
      <div class="banner info">
        <Icon name="new" />
        <div>
          <b>New server: nothing is served until a reviewer approves its surface</b>
          <span>Read every tool’s description and schema below: agents will see them exactly so.</span>
        </div>
      </div>
    );
  if (s.status === 'REJECTED')
    return (
      <div class="banner bad">
        <Icon name="x" />
        <div>
          <b>Rejected: none of its tools are served</b>
        </div>
      </div>
    );
  if (s.blocked_tools?.length) {
    const byReviewer = s.blocked_tools.filter((b) => b.action === 'block').length;
    const held = s.blocked_tools.length - byReviewer;
    return (
      <div class="banner warn">
        <Icon name="alert" />
        <div>
          <b>
            {[held ? `${plural(held, 'tool')} held for review` : '', byReviewer ? `${plural(byReviewer, 'tool')} blocked by a reviewer` : '']
              .filter(Boolean)
              .join(', ')}
            ; the rest are served
          </b>
          <span>
            {held ? 'Approving the observed surface releases the held ones. ' : ''}
            {byReviewer ? 'A blocked tool stays blocked until its own definition is approved.' : ''}
          </span>
        </div>
      </div>
    );
  }
  return null;
}

export function ServerView({ name }: { name: string }) {
  useTick();
  const res = useResource(() => api.server(name), [name]);
  useLive((e) => e.subject_kind === 'server' && e.subject === name, res.reload);
  const [layout, setLayout] = useDiffLayout();
  const d = res.data;
  const s = d?.server;
  // Per-tool decisions need the gateway's own definition hashes.
  const hashes = observedToolHashes(d);
  const [toolDialog, setToolDialog] = useState<{ tool: string; kind: DecisionKind; target: DecisionTarget } | null>(null);
  const openTool = (tool: string | undefined, kind: DecisionKind) => {
    if (!d || !s || !tool) return;
    const a = toolActions(d, tool, hashes);
    if (!a.hash || !(kind === 'approve' ? a.approve : a.block)) return;
    setToolDialog({
      tool,
      kind,
      target: {
        kind: 'tool',
        subject: toolSubject(s.name, tool),
        title: `Tool ${tool} of ${s.name}`,
        hash: a.hash,
        policyDigest: d.policy_digest,
        audience: d.audience,
        detail: `tool:${s.name}/${tool} · ${a.blocked ? blockedLabel(a.blocked) : 'not blocked'} · server ${s.status}`,
        risk: toolRisk(d, tool) ?? undefined,
        context: serverContext(d, null, tool),
      },
    });
  };
  const highlighted = () => document.querySelector<HTMLElement>('.nav-current[data-tool]')?.dataset.tool;
  // The diff machinery loads on demand (it is most of a diff's weight).
  const width = useDiffColumns(layout);
  const [diff, setDiff] = useState<SurfaceDiff | null>(null);
  useEffect(() => {
    if (!d?.baseline) return setDiff(null);
    let live = true;
    void import('../lib/surfaceDiff').then((m) => live && setDiff(m.surfaceDiff(d.baseline, d.observed, width)));
    return () => {
      live = false;
    };
  }, [d, width]);
  const lead = s ? serverRisk(s) : { risk: null, label: '' };
  const decision = useDecision({
    target:
      d && s?.observed_hash
        ? {
            kind: 'server',
            subject: s.name,
            title: `Server ${s.name}`,
            hash: s.observed_hash,
            policyDigest: d.policy_digest,
            audience: d.audience,
            risk: lead.risk,
            status: s.status,
            detail: `${d.subject} · ${plural(s.tools ?? 0, 'tool')} · ${
              d.first_contact ? `first-contact scan: ${plural(d.first_contact.findings.length, 'finding')}` : plural(d.drift.length, 'drift')
            } · status ${s.status}`,
            context: serverContext(d, diff),
          }
        : null,
    currentHash: s?.observed_hash ?? undefined,
    can: { approve: canApprove(d), reject: !!s?.observed_hash && s.status !== 'REJECTED' },
    intent: href.server(name),
    data: d,
    keys: {
      d: () => setLayout(layout === 'side-by-side' ? 'line-by-line' : 'side-by-side'),
      t: () => openTool(highlighted(), 'approve'),
      b: () => openTool(highlighted(), 'reject'),
    },
    reload: res.reload,
    doneMessage: (r) => `Server ${name}: ${String(r.status ?? 'decided')}`,
  });
  const card = (t: Tool) => (
    <ToolCard
      t={t}
      actions={toolActions(d, t.name, hashes)}
      state={toolState(d, t.name)}
      onDecide={hashes ? (k) => openTool(t.name, k) : undefined}
    />
  );
  return (
    <div class="page">
      <div class="page-head">
        <div style={{ minWidth: 0 }}>
          <a class="crumb" href={href.servers()}>
            ← Servers
          </a>
          <div class="title-line">
            <h1>
              Server <span class="mono" style={{ fontSize: '19px' }}>{name}</span>
            </h1>
            {s && <Status status={s.status} />}
            {lead.risk && (
              <span data-testid="server-risk">
                <RiskBadge risk={lead.risk} label={lead.label} />
              </span>
            )}
          </div>
          <div class="sub">
            {s ? (
              <>
                <span class="row-gap" style={{ gap: '6px' }}>
                  <span class={`dot ${s.link?.state ?? ''}`} />
                  {s.link?.state ?? 'not configured'}
                </span>
                ·<span>
                  {s.served_tools ?? 0} of {s.tools ?? 0} tools served
                </span>
                ·<Time unix={s.updated_at} />
              </>
            ) : (
              <span>&nbsp;</span>
            )}
          </div>
        </div>
        <DecisionButtons decision={decision} approveLabel="Approve surface" />
      </div>
      {res.error && <ErrorBanner error={res.error} onRetry={res.reload} />}
      {d && banner(d)}
      {d?.first_contact && <FirstContactPanel d={d} />}
      <div class="card facts" data-testid="facts">
        <div>
          <dt>Subject (what an approval names)</dt>
          <dd class="mono">{d?.subject ?? '…'}</dd>
        </div>
        <div>
          <dt>Transport</dt>
          <dd class="mono wrap" data-testid="transport">
            {s?.transport ?? '—'}
          </dd>
        </div>
        <div>
          <dt>Observed surface (what an approval signs)</dt>
          <dd data-testid="observed-hash">
            <Hash value={s?.observed_hash} />
          </dd>
        </div>
        <div>
          <dt>Approved baseline</dt>
          <dd>
            <Hash value={s?.baseline_hash} />
          </dd>
        </div>
        <div>
          <dt>Policy</dt>
          <dd>
            <Hash value={d?.policy_digest} />
          </dd>
        </div>
        <div>
          <dt>Link</dt>
          <dd>
            {s?.link?.state ?? '—'}
            {s?.link?.error && <span class="muted"> · {s.link.error}</span>}
            {s?.link?.stale_listings?.map((l) => (
              <div class="muted" key={l.method} data-testid="stale-listing">
                {l.method} served as last listed: {l.error}
              </div>
            ))}
            {s?.version !== undefined && <span class="muted"> · record version {s.version}</span>}
          </dd>
        </div>
        <div style={{ gridColumn: '1 / -1' }} data-testid="also-offers">
          <dt>Also served once approved (inspected; pinned ones are watched for drift)</dt>
          <dd>
            {s?.also_offers?.length ? (
              <span class="row-gap">
                {s.also_offers.map((c) => (
                  <span class="chip" title={s.pinned?.includes(c) ? `${c}: pinned with the tools` : `${c}: listed live, not pinned`}>
                    {c}
                    {s.pinned?.includes(c) ? ' · pinned' : ''}
                  </span>
                ))}
              </span>
            ) : (
              <span class="muted">{s ? 'nothing besides its tools' : '—'}</span>
            )}
          </dd>
        </div>
      </div>
      <LaunchPanel launch={s?.launch} />
      <div>
          {(!d || d.drift.length > 0) && (
            <>
              <div class="section-title">Drift {d && <span class="faint">({d.drift.length})</span>}</div>
              <div class="card" data-testid="drift-list">
                {!d ? (
                  <SkeletonBlock lines={3} />
                ) : (
                  d.drift.map((x) => (
                    <div class="drift" data-nav data-testid="drift">
                      <div>
                        <RiskBadge risk={x.severity} label="Severity" />
                      </div>
                      <div style={{ minWidth: 0 }}>
                        <div class="what">
                          <span class="chip">{x.kind}</span>
                          {x.tool && (
                            <span>
                              tool <b class="mono">{x.tool}</b>
                            </span>
                          )}
                          <span class={`chip act-${x.action}`}>action: {x.action}</span>
                          <span class="chip">scope: {x.scope}</span>
                        </div>
                        <div class="summary">
                          <Ticked text={x.summary} />
                        </div>
                        {x.findings.length > 0 && (
                          <div class="findings">
                            {x.findings.map((f) => (
                              <span class="chip finding">{f}</span>
                            ))}
                          </div>
                        )}
                      </div>
                    </div>
                  ))
                )}
              </div>
            </>
          )}
          <BlockedList
            title="Blocked tools"
            testid="blocked"
            items={(s?.blocked_tools ?? []).map((b) => ({ name: b.tool, chipClass: `act-${b.action}`, chip: blockedLabel(b.action), why: b.why }))}
          />
          <BlockedList
            title="Held prompts and resources"
            testid="blocked-content"
            items={(s?.blocked_content ?? []).map((b) => ({ name: b.key, chipClass: 'act-hold', chip: `${b.kind.replace('_', ' ')} held`, why: b.why }))}
          />
          {d && <BehaviourPanel d={d} />}
          {!d && <SkeletonBlock lines={8} />}
        </div>
      <div class="wide">
      {diff && diff.changed.length > 0 && (
        <>
          <div class="section-title">
            Baseline → observed
            <span class="faint" style={{ textTransform: 'none', letterSpacing: 0, fontWeight: 500 }}>
              {diff.changed.length} changed
            </span>
            <span class="right">
              <LayoutToggle layout={layout} set={setLayout} />
            </span>
          </div>
          <div data-nav data-testid="surface-diff">
            <DiffView diff={diff.patch} layout={layout} minHeight={240} />
          </div>
        </>
      )}
      {d?.observed && (
        <>
          <div class="section-title">
            {d.baseline ? 'Observed surface' : 'Surface to approve'}{' '}
            <span class="faint">({d.observed.tools.length} tools)</span>
          </div>
          {d.observed.instructions && (
            <div class="card card-body" style={{ marginBottom: '12px' }}>
              <div class="sub-h">Server instructions</div>
              <div style={{ whiteSpace: 'pre-wrap' }}>{d.observed.instructions}</div>
            </div>
          )}
          {d.baseline && diff && diff.changed.length > 0 ? (
            <div class="card">
              <details class="unchanged">
                <summary>
                  Show all {d.observed.tools.length} tools ({diff.unchanged.length} unchanged:{' '}
                  {diff.unchanged.join(', ') || 'none'})
                </summary>
                <div class="card-body tools-grid">{d.observed.tools.map(card)}</div>
              </details>
            </div>
          ) : (
            <div class="tools-grid">{d.observed.tools.map(card)}</div>
          )}
        </>
      )}
      </div>
      {d && (
        <div class="danger-zone" data-testid="danger-zone">
          <RemoveServer name={name} d={d} />
        </div>
      )}
      {decision.dialog}
      {toolDialog && (
        <DecisionDialog
          target={toolDialog.target}
          currentHash={hashes?.get(toolDialog.tool)}
          decision={toolDialog.kind}
          onClose={() => setToolDialog(null)}
          onChanged={(m) => {
            setToolDialog(null);
            toast(`Changed since you opened it; review it again. (${m})`, 'bad');
            res.reload();
          }}
          onDone={(r) => {
            const k = toolDialog.kind;
            setToolDialog(null);
            toast(`Tool ${toolDialog.tool}: ${k === 'approve' ? 'definition approved' : 'blocked'} (server ${String(r.status ?? '')})`, k === 'approve' ? 'ok' : 'info');
            res.reload();
          }}
        />
      )}
    </div>
  );
}
