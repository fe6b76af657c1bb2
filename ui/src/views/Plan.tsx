import { useEffect, useState } from 'preact/hooks';
import { api, type Check, type PlanDetail, type Rollback, type Stage, type Target } from '../lib/api';
import { useLive, useResource, useTick, ago } from '../lib/hooks';
import { go, href } from '../lib/router';
import { canonicalBytes } from '../lib/jcs';
import { toHex } from '../lib/statement';
import { DecisionButtons, useDecision } from '../components/Decision';
import { DiffView, LayoutToggle, useDiffLayout } from '../components/Diff';
import { CopyButton, ErrorBanner, Hash, Icon, pretty, RiskBadge, SkeletonBlock, Status, Ticked, Time } from '../components/ui';
import { plural } from '../components/ui';
import { diffSummary, heldCall, stageLines } from '../lib/effort';
import { approverNames, nameOfKey, zonedTime } from '../lib/receipt';
import { promptMessages } from '../lib/heldPrompt';

/** A target as text: a string as it is, an object target as `kind id {fields}`. */
function targetText(t: Target): string {
  if (typeof t === 'string') return t;
  const { kind, id, ...fields } = t;
  return Object.keys(fields).length ? `${kind} ${id} ${JSON.stringify(fields)}` : `${kind} ${id}`;
}

function RollbackView({ r }: { r?: Rollback }) {
  if (!r) return <div class="none">none</div>;
  if (typeof r === 'string') return <div class="rollback">{r}</div>;
  if ('irreversible' in r) return <div class="rollback">Irreversible: {r.justification}</div>;
  return (
    <div class="rollback">
      Compensating stage: <span class="action">{r.action}</span> → {targetText(r.target)}
      {r.params && Object.keys(r.params).length > 0 && <span class="mono muted"> {JSON.stringify(r.params)}</span>}
      <Checks list={r.preconditions} empty="no preconditions" />
    </div>
  );
}

function Checks({ list, empty }: { list?: Check[]; empty: string }) {
  if (!list?.length) return <div class="none">{empty}</div>;
  return (
    <ul class="checks">
      {list.map((c) => (
        <li>
          <span class="probe">{c.probe}</span>
          {c.target && <span class="mono"> → {targetText(c.target)}</span>}
          {c.expect && (
            <span class="mono"> expect {c.expect.op} {JSON.stringify(c.expect.value)}</span>
          )}
          {c.params && Object.keys(c.params).length > 0 && (
            <pre class="block check-params" data-testid="check-params">
              {pretty(c.params)}
            </pre>
          )}
          {c.description && <div class="d">{c.description}</div>}
        </li>
      ))}
    </ul>
  );
}

function longest(diff: string): number {
  return diff.split('\n').reduce((m, l) => Math.max(m, l.length), 0);
}

/** Params as key → value; multi-line strings shown as the text they are. */
function Params({ params }: { params: Record<string, unknown> }) {
  return (
    <div class="params">
      {Object.keys(params)
        .sort()
        .map((k) => {
          const v = params[k];
          const text = typeof v === 'string' && v.includes('\n');
          return (
            <>
              <span class="pk">{k}</span>
              <div style={{ minWidth: 0 }}>
                <pre class="block">{text ? v : pretty(v)}</pre>
                {text && (
                  <div class="text-note">
                    text, {(v as string).split('\n').length - ((v as string).endsWith('\n') ? 1 : 0)} lines
                    {(v as string).endsWith('\n') ? ', ends with a newline' : ''}
                  </div>
                )}
              </div>
            </>
          );
        })}
    </div>
  );
}

/** A held request to a model (issue 42): why it was held, and each message it sends, as text. */
function HeldPrompt({ params }: { params: Record<string, unknown> }) {
  const messages = promptMessages(params.request);
  return (
    <div class="full held-prompt" data-testid="held-prompt">
      <div class="sub-h">
        Request to {String(params.model ?? '?')} at {String(params.provider ?? '?')}
      </div>
      {typeof params.reason === 'string' && (
        <div class="held-why">
          Held by the {String(params.layer ?? '?')} layer: {params.reason}
        </div>
      )}
      {messages ? (
        <ol class="prompt-messages">
          {messages.map((m, i) => (
            <li key={i} class={`prompt-message role-${m.role}`}>
              <span class="prompt-role">{m.role}</span>
              <pre class="block">{m.text}</pre>
            </li>
          ))}
        </ol>
      ) : (
        <div class="none">not a chat request: read its params below</div>
      )}
    </div>
  );
}

function StageCard({ s, n }: { s: Stage; n: number }) {
  const params = s.params && Object.keys(s.params).length ? s.params : null;
  return (
    <div class="stage" data-nav data-testid="stage">
      <div class="stage-n">{n}</div>
      <div style={{ minWidth: 0 }}>
        <div class="stage-top">
          <span class="stage-id">{s.id}</span>
          <span class="action">{s.action}</span>
        </div>
        <div class="target">
          <span class="arrow">target</span>
          {targetText(s.target)}
        </div>
        <div class="stage-grid">
          {s.action === 'llm.permit' && <HeldPrompt params={s.params ?? {}} />}
          <div class="full">
            <div class="sub-h">Params</div>
            {params ? <Params params={params} /> : <div class="none">none</div>}
          </div>
          <div>
            <div class="sub-h">Preconditions</div>
            <Checks list={s.preconditions} empty="none" />
          </div>
          <div>
            <div class="sub-h">Verify</div>
            <Checks list={s.verify} empty="none" />
          </div>
          <div class="full">
            <div class="sub-h">Rollback (never run automatically; a halted plan's rollback plan is reviewed like any plan)</div>
            <RollbackView r={s.rollback} />
          </div>
        </div>
      </div>
    </div>
  );
}

/** Recomputes the plan hash from the canonical document, here in the browser. */
function useRecomputed(d: PlanDetail | undefined): boolean | null {
  const [ok, setOk] = useState<boolean | null>(null);
  useEffect(() => {
    setOk(null);
    if (!d?.canonical) return;
    let live = true;
    try {
      const body = (JSON.parse(d.canonical) as { body: unknown }).body;
      void crypto.subtle.digest('SHA-256', canonicalBytes(body) as BufferSource).then((h) => {
        if (live) setOk('sha256:' + toHex(new Uint8Array(h)) === d.plan.plan_hash);
      });
    } catch {
      setOk(false);
    }
    return () => {
      live = false;
    };
  }, [d?.canonical, d?.plan.plan_hash]);
  return ok;
}

/** On a halted plan: propose its rollback plan, then open it for review. */
function RollbackButton({ id }: { id: string }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <div style={{ marginTop: '6px' }}>
      <button
        class="btn small"
        data-testid="propose-rollback"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          api
            .proposeRollback(id)
            .then((r) => go(href.plan(r.plan.plan_id)))
            .catch((e: Error) => setError(e.message))
            .finally(() => setBusy(false));
        }}
      >
        Propose its rollback plan
      </button>
      {error && (
        <div class="mono">
          <Ticked text={error} />
        </div>
      )}
    </div>
  );
}

export function PlanView({ id }: { id: string }) {
  useTick();
  const res = useResource(() => api.plan(id), [id]);
  // Who signed each decision, by name (`human:jane`), not by key id.
  const approvers = useResource(() => api.approvers(), []);
  const names = approverNames(approvers.data?.approvers ?? []);
  useLive((e) => e.subject_kind === 'plan' && e.subject === id, res.reload);
  const [layout, setLayout] = useDiffLayout();
  const d = res.data;
  const open = d?.plan.status === 'PROPOSED';
  const recomputed = useRecomputed(d);
  const decision = useDecision({
    target: d
      ? {
          kind: 'plan',
          subject: d.plan.plan_id,
          title: d.plan.title,
          hash: d.plan.plan_hash,
          policyDigest: d.policy_digest,
          audience: d.audience,
          risk: d.plan.risk,
          detail: `${d.plan.plan_id} · revision ${d.plan.revision} · ${plural(d.document?.body.stages.length ?? 0, 'stage')} · proposed by ${d.plan.proposer}`,
          // A held call shows its tool and exact arguments; any other plan, its stages.
          context:
            heldCall(d.document) ??
            (d.document ? { kind: 'stages', stages: stageLines(d.document.body.stages), diff: diffSummary(d.diff) } : null),
        }
      : null,
    currentHash: d?.plan.plan_hash,
    can: { approve: open, reject: open },
    intent: href.plan(id),
    data: d,
    keys: { d: () => setLayout(layout === 'side-by-side' ? 'line-by-line' : 'side-by-side') },
    reload: res.reload,
    doneMessage: (r) => {
      const st = String(r.status ?? '');
      const n = r.approvals as number | undefined;
      const need = r.approvals_required as number | undefined;
      return st === 'PROPOSED' && n !== undefined && need !== undefined
        ? `Approval recorded: ${n} of ${need} needed`
        : `${d!.plan.title}: ${st}`;
    },
  });
  const stages = d?.document?.body.stages ?? [];
  const extensions = d?.document ? Object.entries(d.document.body).filter(([k]) => k !== 'stages') : [];
  return (
    <div class="page">
      <div class="page-head">
        <div style={{ minWidth: 0 }}>
          <a class="crumb" href={href.plans()}>
            ← Plans
          </a>
          <div class="title-line">
            <h1 data-testid="plan-title">{d ? d.plan.title : id}</h1>
            {d && <Status status={d.plan.status} />}
            {d && <RiskBadge risk={d.plan.risk} label="Risk" />}
          </div>
          <div class="sub">
            {d ? (
              <>
                <span class="mono">{d.plan.plan_id}</span>·<span>revision {d.plan.revision}</span>·
                <span>proposed by {d.plan.proposer}</span>·<Time unix={d.plan.updated_at} />
              </>
            ) : (
              <span>&nbsp;</span>
            )}
          </div>
        </div>
        <DecisionButtons decision={decision} approveLabel="Approve" />
      </div>
      {res.error && <ErrorBanner error={res.error} onRetry={res.reload} />}
      {d && !d.validation.ok && (
        <div class="banner bad" role="alert">
          <Icon name="alert" />
          <div>
            <b>This plan breaks the policy in force</b>
            <ul style={{ margin: '4px 0 0', paddingLeft: '18px' }}>
              {d.validation.violations.map((v) => (
                <li class="mono">{v}</li>
              ))}
            </ul>
          </div>
        </div>
      )}
      {d && !open && (
        <div class="banner info">
          <Icon name="info" />
          <div>
            <b>Revision {d.plan.revision} is {d.plan.status}</b>
            <span>Nothing to decide here.</span>
            {d.plan.status === 'HALTED' && <RollbackButton id={d.plan.plan_id} />}
          </div>
        </div>
      )}
      <div class="grid-detail">
        <div style={{ minWidth: 0 }}>
          {d?.document?.description && <p style={{ marginTop: 0, fontSize: '14.5px' }}>{d.document.description}</p>}
          <div class="section-title">
            Stages {d && <span class="faint">({stages.length}, run in order)</span>}
          </div>
          <div class="card">
            {!d ? <SkeletonBlock lines={6} /> : stages.map((s, i) => <StageCard s={s} n={i + 1} />)}
          </div>
          {extensions.length > 0 && (
            <>
              <div class="section-title">Extension fields</div>
              <div class="card card-body">
                <pre class="block">{pretty(Object.fromEntries(extensions))}</pre>
              </div>
            </>
          )}
        </div>
        <div class="aside">
          <div class="card">
            <div class="card-head">
              <h3>What an approval signs</h3>
            </div>
            <div class="card-body">
              <dl class="kv stacked">
                <dt>Plan hash</dt>
                <dd data-testid="plan-hash">{d ? <Hash value={d.plan.plan_hash} /> : <span class="sk" />}</dd>
                <dt>Check</dt>
                <dd>
                  {recomputed === null ? (
                    <span class="muted">…</span>
                  ) : recomputed ? (
                    <span style={{ color: 'var(--ok)' }} data-testid="hash-recomputed">
                      ✓ recomputed from the canonical body here
                    </span>
                  ) : (
                    <span style={{ color: 'var(--bad)' }}>✗ the body does not hash to this value</span>
                  )}
                </dd>
                <dt>Policy</dt>
                <dd>{d ? <Hash value={d.policy_digest} /> : null}</dd>
              </dl>
            </div>
          </div>
          <div class="card">
            <div class="card-head">
              <h3>Decisions so far</h3>
              <span class="right faint">{d?.decisions.length ?? ''}</span>
            </div>
            {d && d.decisions.length === 0 ? (
              <div class="card-body none">No decisions on this revision yet.</div>
            ) : (
              <ul class="inline-list" data-testid="decisions">
                {d?.decisions.map((x) => (
                  <li style={{ flexDirection: 'column', alignItems: 'flex-start' }}>
                    <span class="row-gap">
                      <Status status={x.decision === 'approve' ? 'APPROVED' : 'REJECTED'} />
                      <span class="muted" title={zonedTime(x.created_at)}>
                        {ago(x.created_at)}
                      </span>
                      {x.consumed && <span class="faint">· used</span>}
                    </span>
                    <span>{x.reason}</span>
                    <span class="faint" style={{ fontSize: '12px' }} title={x.approver_key_id} data-testid="decision-by">
                      by {x.approver_identity ?? nameOfKey(x.approver_key_id, names)}
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </div>
          <div class="card">
            <div class="card-head">
              <h3>Revisions</h3>
            </div>
            <ul class="inline-list">
              {d?.revisions
                .slice()
                .reverse()
                .map((r) => (
                  <li>
                    <b style={{ width: '28px' }}>r{r.revision}</b>
                    <Status status={r.status} />
                    <code class="ellipsis faint" title={r.plan_hash} style={{ flex: 1 }}>
                      {r.plan_hash.slice(7, 19)}
                    </code>
                    <span class="muted">{ago(r.updated_at)}</span>
                  </li>
                ))}
            </ul>
          </div>
        </div>
      </div>
      <div class="wide">
      {d?.diff && (
        <>
          <div class="section-title">
            Changes since revision {d.revisions.filter((r) => r.revision < d.plan.revision).slice(-1)[0]?.revision}
            <span class="right">
              <LayoutToggle layout={layout} set={setLayout} />
            </span>
          </div>
          {layout === 'side-by-side' && longest(d.diff) > 72 && (
            <div class="diff-note">
              Some lines are longer than a side shows: scroll them, or press <kbd>d</kbd> for the unified view, which
              wraps them.
            </div>
          )}
          <div data-nav data-testid="plan-diff">
            <DiffView diff={d.diff} layout={layout} minHeight={200} />
          </div>
        </>
      )}
      <div class="section-title">
        Canonical JSON (JCS)
        <span class="right">{d && <CopyButton text={d.canonical} label="Copy JSON" />}</span>
      </div>
      <div class="card card-body" data-nav>
        {d ? <pre class="block" data-testid="canonical">{d.canonical}</pre> : <SkeletonBlock lines={3} />}
      </div>
          </div>
      {decision.dialog}
    </div>
  );
}
