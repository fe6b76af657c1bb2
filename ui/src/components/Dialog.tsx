import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useKeys } from '../lib/keys';
import { decide, markActed } from '../lib/decide';
import { isDesktop } from '../lib/config';
import { reasonError, splitToolSubject, type DecisionKind, type SubjectKind } from '../lib/statement';
import { api, type ScopeOffer } from '../lib/api';
import { asksForReason, compactJson, rejectConsequence, type DecisionContext } from '../lib/effort';
import { kindLabel } from '../lib/serverReview';
import { plural, RiskBadge, Ticked } from './ui';

/** A held tool call's plan (the gateway names them `call-…`). */
export const isHeldCall = (kind: SubjectKind, subject: string) => kind === 'plan' && subject.startsWith('call-');


const SCOPE_HINT: Record<string, string> = {
  once: 'Run this call, once. The next one is held again.',
};

/**
 * What an approval of a held call covers: once, or a standing approval the
 * gateway offers (this session, an hour, these exact arguments), signed beside
 * the plan. The block keeps its height while the offers load (no jump).
 */
function ScopePicker({
  offers,
  error,
  chosen,
  onChoose,
}: {
  offers: ScopeOffer[] | null;
  error: string | null;
  chosen: string;
  onChoose: (s: string) => void;
}) {
  return (
    <fieldset class="scopes" data-testid="scopes" aria-busy={offers === null && !error}>
      <legend>Approve for</legend>
      {error && <div class="muted">Only once: {error}</div>}
      {!offers && !error && <div class="muted">Loading what this call can be approved for…</div>}
      {offers?.map((o) => (
        <label class={`scope${chosen === o.scope ? ' on' : ''}`} key={o.scope} data-scope={o.scope}>
          <input
            type="radio"
            name="scope"
            value={o.scope}
            checked={chosen === o.scope}
            onChange={() => onChoose(o.scope)}
          />
          <span>
            <b>{o.label}</b>
            <span class="muted">{o.grant ? <Ticked text={o.grant.summary} /> : SCOPE_HINT.once}</span>
          </span>
        </label>
      ))}
      {offers && offers.length === 1 && (
        <div class="muted" style={{ fontSize: '12px' }}>
          No standing approval is offered: inspection held this call, its tool changed since it was approved, or its
          agent’s key is gone.
        </div>
      )}
    </fieldset>
  );
}

export function Modal({
  title,
  onClose,
  children,
  label,
  wide,
}: {
  title: ComponentChildren;
  onClose: () => void;
  children: ComponentChildren;
  label: string;
  wide?: boolean;
}) {
  useKeys({ Escape: onClose }, { modal: true });
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const prev = document.activeElement as HTMLElement | null;
    const first = ref.current?.querySelector<HTMLElement>('[autofocus], input, textarea, button.primary, button');
    first?.focus({ preventScroll: true });
    return () => prev?.focus?.();
  }, []);
  return (
    <div class="overlay" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        class="dialog"
        role="dialog"
        aria-modal="true"
        aria-label={label}
        ref={ref}
        style={wide ? { width: 'min(720px, calc(100vw - 32px))' } : undefined}
        onKeyDown={(e) => {
          // Keep Tab inside the dialog.
          if (e.key !== 'Tab' || !ref.current) return;
          const f = Array.from(
            ref.current.querySelectorAll<HTMLElement>('button, input, textarea, select, a[href]'),
          ).filter((x) => !(x as HTMLButtonElement).disabled);
          if (!f.length) return;
          const first = f[0];
          const last = f[f.length - 1];
          if (e.shiftKey && document.activeElement === first) {
            e.preventDefault();
            last.focus();
          } else if (!e.shiftKey && document.activeElement === last) {
            e.preventDefault();
            first.focus();
          }
        }}
      >
        <h2>{title}</h2>
        {children}
      </div>
    </div>
  );
}

export interface DecisionTarget {
  kind: SubjectKind;
  subject: string;
  /** What is shown: plan title or server name. */
  title: string;
  hash: string;
  policyDigest: string;
  /** The gateway's log origin (what the signed statement names as its audience). */
  audience: string;
  risk?: string | null;
  detail?: string;
  /** A server's status (what a rejection stops is said in the dialog). */
  status?: string;
  /** What changed or what the call does, shown in the dialog (issue 46). */
  context?: DecisionContext | null;
}

/**
 * What the reviewer is deciding on, inside the dialog: a held call's tool and
 * exact arguments, a plan's stages, a server's drift or first-contact findings.
 * Long content scrolls in its own box; the hash and the reason stay in view.
 */
function DecisionContextView({ c }: { c: DecisionContext }) {
  if (c.kind === 'call')
    return (
      <section class="context" data-testid="decision-context" data-context="call">
        <div class="context-h">What the call does</div>
        <div class="context-call">
          <code data-testid="call-tool">{c.exposed}</code>
          <span class="muted">
            tool <code>{c.tool}</code> of server <code>{c.server}</code>
          </span>
        </div>
        {c.why && (
          <div class="muted context-why">
            <Ticked text={c.why} />
          </div>
        )}
        <div class="context-h">Arguments</div>
        <pre class="block context-args" data-testid="call-arguments">
          {compactJson(c.arguments)}
        </pre>
      </section>
    );
  if (c.kind === 'stages')
    return (
      <section class="context" data-testid="decision-context" data-context="stages">
        <div class="context-h">
          What it does: {plural(c.stages.length, 'stage')}, in order
          {c.diff && (
            <span class="context-diff" data-testid="context-diff">
              {' '}
              · since the last revision <span class="add">+{c.diff.added}</span> <span class="del">−{c.diff.removed}</span>{' '}
              lines
            </span>
          )}
        </div>
        <ol class="context-list stages">
          {c.stages.map((x) => (
            <li>
              <code class="context-id">{x.id}</code> <span class="action">{x.action}</span>{' '}
              <span class="mono context-target">→ {x.target}</span>
              {x.params && (
                <div class="mono context-params" title={x.params}>
                  {x.params}
                </div>
              )}
            </li>
          ))}
        </ol>
      </section>
    );
  if (c.kind === 'drift')
    return (
      <section class="context" data-testid="decision-context" data-context="drift">
        <div class="context-h">
          What changed: {plural(c.drift.length, 'drift')}
          {c.changed && c.changed.length > 0 && (
            <span data-testid="context-changed">
              {' '}
              · definitions changed: <span class="names mono">{c.changed.join(', ')}</span>
            </span>
          )}
        </div>
        {c.launch && c.launch.length > 0 && (
          <div class="context-launch">How it is started changed: {c.launch.join(', ')}</div>
        )}
        <ul class="context-list">
          {c.drift.map((x) => (
            <li data-testid="context-drift">
              <span class="row-gap">
                <RiskBadge risk={x.severity} label="Severity" />
                <span class="chip">{x.kind}</span>
                {x.tool && <b class="mono">{x.tool}</b>}
                <span class={`chip act-${x.action}`}>{x.action}</span>
              </span>
              <div class="context-summary">
                <Ticked text={x.summary} />
              </div>
              {x.findings.length > 0 && (
                <div class="findings">
                  {x.findings.map((f) => (
                    <span class="chip finding">{f}</span>
                  ))}
                </div>
              )}
            </li>
          ))}
        </ul>
      </section>
    );
  return (
    <section class="context" data-testid="decision-context" data-context="findings">
      <div class="context-h">What the first-contact scan found: {plural(c.findings.length, 'finding')}</div>
      <ul class="context-list">
        {c.findings.map((f) => (
          <li data-testid="context-finding">
            <span class="row-gap">
              <b class="mono">{f.tool ?? 'instructions'}</b>
              <span class="chip">{kindLabel(f.kind)}</span>
              <code class="fc-field">{f.field || '(whole)'}</code>
            </span>
            <div class="context-summary">“{f.excerpt}”</div>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function DecisionDialog({
  target,
  decision,
  onClose,
  onDone,
  onChanged,
  currentHash,
}: {
  target: DecisionTarget;
  /** The subject's hash now (live): when it moves away from `target.hash`, nothing is signed. */
  currentHash?: string;
  decision: DecisionKind;
  onClose: () => void;
  onDone: (result: Record<string, unknown>) => void;
  /** The subject changed since it was shown: the view reloads, the reviewer looks again. */
  onChanged: (message: string) => void;
}) {
  const approve = decision === 'approve';
  const tool = target.kind === 'tool';
  // High and critical: the reviewer types the reason (nothing pre-filled), and
  // the confirm button waits for it (issue 46 item 1).
  const careful = asksForReason(target.risk);
  const [reason, setReason] = useState(
    approve && !careful
      ? target.kind === 'plan'
        ? 'Reviewed the stages and approved.'
        : tool
          ? 'Reviewed the tool’s definition and approved.'
          : 'Reviewed the surface and approved.'
      : '',
  );
  const [busy, setBusy] = useState(false);
  const busyRef = useRef(false);
  const [error, setError] = useState<string | null>(null);
  // Said here, before anything is signed or sent (not as the gateway's refusal).
  const [reasonProblem, setReasonProblem] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const heldCall = approve && isHeldCall(target.kind, target.subject);
  const [offers, setOffers] = useState<ScopeOffer[] | null>(null);
  const [offersError, setOffersError] = useState<string | null>(null);
  const [scope, setScope] = useState('once');
  useEffect(() => {
    if (!heldCall) return;
    api.scopes(target.subject).then(
      (r) => (r.plan_hash === target.hash ? setOffers(r.scopes) : setOffersError('the call changed since it was shown')),
      (e) => setOffersError((e as Error).message),
    );
  }, [heldCall, target.subject, target.hash]);
  useEffect(() => {
    // Focused without scrolling: a tall dialog opens at its top (what is decided on).
    input.current?.focus({ preventScroll: true });
    input.current?.select();
  }, []);
  // Enter confirms even before the reason field has focus (a fast keyboard).
  useKeys({
    Enter: () => {
      if ((document.activeElement as HTMLElement | null)?.tagName !== 'BUTTON') void submit();
    },
  }, { modal: true });
  const what = heldCall ? 'held call' : target.kind === 'plan' ? 'plan' : tool ? 'tool' : 'server surface';
  // Rejecting one tool blocks it (the rest of the server is left as it is).
  const verb = approve ? 'Approve' : tool ? 'Block' : 'Reject';
  const consequence = approve ? null : rejectConsequence(target.kind, target.status);
  const stale = currentHash !== undefined && currentHash !== target.hash;
  const untyped = careful && reason.trim() === '';
  const submit = async (e?: Event) => {
    e?.preventDefault();
    if (busyRef.current || stale || untyped) return;
    const bad = reasonError(reason);
    if (bad) {
      setError(null);
      setReasonProblem(bad === 'A reason is required.' ? `A reason is needed: say why you ${verb.toLowerCase()} it. Nothing was signed or sent.` : `${bad} Nothing was signed or sent.`);
      input.current?.focus({ preventScroll: true });
      return;
    }
    busyRef.current = true;
    setBusy(true);
    setError(null);
    setReasonProblem(null);
    try {
      // A tool's decision comes back as an event about its server.
      if (tool) markActed('server', splitToolSubject(target.subject).server);
      else markActed(target.kind, target.subject);
      const r = await decide({
        kind: target.kind,
        subject: target.subject,
        hash: target.hash,
        policyDigest: target.policyDigest,
        audience: target.audience,
        decision,
        reason,
        scope: heldCall ? offers?.find((o) => o.scope === scope) : undefined,
      });
      onDone(r);
    } catch (err) {
      const s = (err as { status?: number }).status;
      const code = (err as { code?: string }).code;
      if (s === 409 || code === 'changed' || /current hash is/.test((err as Error).message)) {
        busyRef.current = false;
        onChanged((err as Error).message);
        return;
      }
      setError((s ? `${s}: ` : '') + (err as Error).message);
      busyRef.current = false;
      setBusy(false);
    }
  };
  return (
    <Modal
      label={`${verb} ${what}`}
      onClose={() => !busy && onClose()}
      title={<>{tool ? (approve ? 'Approve this tool’s definition?' : 'Block this tool?') : `${verb} this ${what}?`}</>}
      wide={!!target.context}
    >
      <form onSubmit={submit}>
        <div class="body">
          <div class="summary">
            <div class="row-gap" style={{ marginBottom: '6px' }}>
              <b class="ellipsis">{target.title}</b>
              {target.risk !== undefined && <RiskBadge risk={target.risk} />}
            </div>
            {target.detail && <div class="muted" style={{ fontSize: '12.5px', marginBottom: '4px' }}>{target.detail}</div>}
            <div class="mono" style={{ fontSize: '11.5px', wordBreak: 'break-all' }}>
              {target.kind === 'plan' ? 'plan_hash ' : tool ? 'definition_hash ' : 'observed_hash '}
              {target.hash}
            </div>
          </div>
          {target.context && <DecisionContextView c={target.context} />}
          {heldCall && <ScopePicker offers={offers} error={offersError} chosen={scope} onChoose={setScope} />}
          {consequence && (
            <div class={`consequence${target.status === 'TRUSTED' ? ' strong' : ''}`} data-testid="consequence">
              {consequence}
            </div>
          )}
        </div>
        {/* The reason and what refused it stay in view while the part above scrolls. */}
        <div class="body reason-block">
          <label for="reason">Reason {approve && !careful ? '' : '(required)'}</label>
          <input
            id="reason"
            name="reason"
            type="text"
            ref={input}
            value={reason}
            placeholder={approve ? 'Why this is safe to run' : 'What is wrong with it'}
            onInput={(e) => {
              setReason((e.target as HTMLInputElement).value);
              setReasonProblem(null);
            }}
            autocomplete="off"
            aria-invalid={reasonProblem ? true : undefined}
            aria-describedby={[careful ? 'reason-hint' : '', reasonProblem ? 'reason-problem' : ''].filter(Boolean).join(' ') || undefined}
          />
          {reasonProblem && (
            <div class="error-box" role="alert" id="reason-problem" data-testid="reason-problem">
              {reasonProblem}
            </div>
          )}
          {careful && (
            <div class="reason-hint" id="reason-hint" data-testid="reason-hint" data-typed={String(!untyped)}>
              {target.risk === 'critical' ? 'Critical' : 'High'} risk: the reason is yours to type, in your own words
              {untyped ? ` — ${approve ? 'Approve' : tool ? 'Block' : 'Reject'} waits for it.` : '.'}
            </div>
          )}
          <div class="help">
            The reason is part of the signed statement and the log. Signed with{' '}
            {isDesktop() ? 'this computer’s keychain approver key' : 'this browser’s approver key'}, valid for one hour.
          </div>
          {stale && (
            <div class="error-box" role="alert" data-testid="stale">
              <b>It changed while this dialog was open</b>
              Its hash is now {currentHash}. Cancel and review the new version first.
            </div>
          )}
          {error && (
            <div class="error-box" role="alert">
              <b>The gateway refused the decision</b>
              <Ticked text={error} />
              {/not a trusted approver key/.test(error) && !isDesktop() && (
                <div style={{ marginTop: '6px', color: 'var(--text)' }}>
                  This browser’s key is not registered yet: see <a href="#/settings">Settings</a> for the command an
                  admin runs once.
                </div>
              )}
            </div>
          )}
        </div>
        <div class="foot">
          <span class="left">
            <kbd>Enter</kbd> confirm · <kbd>Esc</kbd> cancel
          </span>
          <button type="button" class="btn" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button
            type="submit"
            class={careful ? 'btn decide' : approve ? 'btn primary' : 'btn danger solid'}
            disabled={busy || stale || untyped}
            data-testid="confirm"
          >
            {busy ? 'Signing…' : `${verb} and sign`}
          </button>
        </div>
      </form>
    </Modal>
  );
}

const SHORTCUTS: [string, [string, string][]][] = [
  [
    'Anywhere',
    [
      ['?', 'This help'],
      ['g i', 'Inbox'],
      ['g p', 'Plans'],
      ['g s', 'Servers'],
      ['g a', 'Standing approvals'],
      ['g l', 'Log'],
      ['g r', 'Receipts'],
      ['g o', 'Overview'],
      ['g ,', 'Settings'],
    ],
  ],
  [
    'Lists',
    [
      ['j / ↓', 'Next'],
      ['k / ↑', 'Previous'],
      ['Enter / o', 'Open'],
    ],
  ],
  [
    'Reviewing a plan or server',
    [
      ['a', 'Approve (asks first; high and critical: type why)'],
      ['r', 'Reject (asks for a reason)'],
      ['j / k', 'Next / previous section'],
      ['t', 'Approve the highlighted tool'],
      ['b', 'Block the highlighted tool'],
      ['d', 'Side-by-side / unified diff'],
      ['u / Esc', 'Back to the list'],
    ],
  ],
];

export function HelpDialog({ onClose }: { onClose: () => void }) {
  useKeys({ '?': onClose }, { modal: true });
  return (
    <Modal label="Keyboard shortcuts" title="Keyboard shortcuts" onClose={onClose} wide>
      <div class="body">
        <div class="help-grid">
          {SHORTCUTS.map(([group, keys]) => (
            <>
              <h3>{group}</h3>
              {keys.map(([k, what]) => (
                <div class="k">
                  <span>{what}</span>
                  <span class="row-gap">
                    {k.split(' / ').map((x) => (
                      <kbd>{x}</kbd>
                    ))}
                  </span>
                </div>
              ))}
            </>
          ))}
        </div>
      </div>
      <div class="foot">
        <button class="btn" onClick={onClose}>
          Close
        </button>
      </div>
    </Modal>
  );
}

export function ConfirmDialog({
  title,
  children,
  confirm,
  danger,
  onConfirm,
  onClose,
}: {
  title: string;
  children: ComponentChildren;
  confirm: string;
  danger?: boolean;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <Modal label={title} title={title} onClose={onClose}>
      <div class="body">{children}</div>
      <div class="foot">
        <button class="btn" onClick={onClose}>
          Cancel
        </button>
        <button class={danger ? 'btn danger solid' : 'btn primary'} onClick={onConfirm}>
          {confirm}
        </button>
      </div>
    </Modal>
  );
}
