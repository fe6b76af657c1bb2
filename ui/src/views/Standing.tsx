// Standing approvals: which role may call which tool, with arguments of which
// shape, without a review — until when. A reviewer can revoke one at once;
// taking a permission away needs no signature, and the log records who and why.
import { useState } from 'preact/hooks';
import { api, type StandingApproval } from '../lib/api';
import { useLive, useResource, useTick } from '../lib/hooks';
import { ConfirmDialog } from '../components/Dialog';
import { toast } from '../components/Toasts';
import { Empty, ErrorBanner, SkeletonRows, Status, Time } from '../components/ui';

function state(s: StandingApproval, now: number): 'ACTIVE' | 'REVOKED' | 'EXPIRED' {
  if (s.revoked_at) return 'REVOKED';
  return s.expires_at > now ? 'ACTIVE' : 'EXPIRED';
}

/** Who a grant covers: a role, or (from a held call's review) one agent, in one session. */
function whoText(s: StandingApproval): string {
  const d = s.document;
  if (!d?.agent) return s.role;
  return d.session ? `${d.agent} (one session)` : d.agent;
}

function shapeText(s: StandingApproval): string {
  if (s.document?.arguments_hash) return 'exactly the arguments approved';
  const shape = s.document?.shape;
  if (!shape || typeof shape !== 'object') return '—';
  const entries = Object.entries(shape as Record<string, unknown>);
  if (!entries.length) return 'no arguments';
  return entries.map(([k, v]) => `${k} = ${v === '*' ? 'any' : JSON.stringify(v)}`).join(', ');
}

export function Standing() {
  useTick();
  const res = useResource(() => api.standing(), []);
  useLive((e) => e.subject_kind === 'standing', res.reload);
  const [revoking, setRevoking] = useState<StandingApproval | null>(null);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const now = Date.now() / 1000;
  const list = res.data?.standing ?? [];
  const active = list.filter((s) => state(s, now) === 'ACTIVE').length;

  const revoke = async () => {
    if (!revoking || busy) return;
    setBusy(true);
    try {
      await api.revokeStanding(revoking.id, reason.trim() || undefined);
      toast(`Revoked: ${revoking.role} → ${revoking.tool}`, 'ok');
      setRevoking(null);
      setReason('');
      res.reload();
    } catch (e) {
      toast(`Not revoked: ${(e as Error).message}`, 'bad');
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="page">
      <div class="page-head">
        <div>
          <h1>Standing approvals</h1>
          <div class="sub">
            <span>
              Classes of tool calls a role or an agent makes without review. {res.data ? `${active} active.` : ''}{' '}
              Granted from a held call’s review (for its session, an hour, or its exact arguments) or with{' '}
              <code>interlock standing add</code>; a call that inspection flags is held regardless.
            </span>
          </div>
        </div>
      </div>
      {res.error && <ErrorBanner error={res.error} onRetry={res.reload} />}
      {!(res.error && !res.data) && (
        <div class="list" data-testid="standing">
          <div class="list-head">
            <span style={{ width: '28px' }} />
            <span style={{ flex: 1 }}>Role or agent → tool, argument shape</span>
            <span style={{ width: '150px' }}>Approver key</span>
            <span style={{ width: '112px' }}>Status</span>
            <span style={{ width: '96px', textAlign: 'right' }}>Expires</span>
            <span style={{ width: '84px' }} />
          </div>
          {!res.data ? (
            <SkeletonRows n={3} cols={3} />
          ) : list.length === 0 ? (
            <Empty title="No standing approvals">Every call beyond a role's risk limit waits for a reviewer.</Empty>
          ) : (
            list.map((s) => {
              const st = state(s, now);
              return (
                <div class="row" data-testid="row" data-key={s.id} key={s.id}>
                  <span class={`bar risk-${st === 'ACTIVE' ? 'low' : 'none'}`} />
                  <span class="kind">⟳</span>
                  <span class="main-col">
                    <div class="t">
                      <span class="mono" title={s.document?.agent ? `agent ${s.document.agent}, role ${s.role}` : `role ${s.role}`}>
                        {whoText(s)}
                      </span>{' '}
                      → <span class="mono">{s.tool}</span>
                    </div>
                    <div class="s mono" title={JSON.stringify(s.document?.shape ?? {})}>
                      {shapeText(s)}
                    </div>
                  </span>
                  <span class="col mono faint" style={{ width: '150px', fontSize: '12px' }} title={s.approver_key_id}>
                    {s.approver_key_id.replace(/^ed25519:/, '').slice(0, 12)}…
                  </span>
                  <span class="col w-status">
                    <Status status={st} />
                  </span>
                  <span class="time" style={{ width: '96px' }}>
                    {st === 'REVOKED' ? <Time unix={s.revoked_at} /> : <Time unix={s.expires_at} />}
                  </span>
                  <span style={{ width: '84px', textAlign: 'right' }}>
                    {st === 'ACTIVE' && (
                      <button class="btn small danger" data-testid="revoke" onClick={() => setRevoking(s)}>
                        Revoke
                      </button>
                    )}
                  </span>
                </div>
              );
            })
          )}
        </div>
      )}
      {revoking && (
        <ConfirmDialog
          title="Revoke this standing approval?"
          confirm={busy ? 'Revoking…' : 'Revoke'}
          danger
          onConfirm={revoke}
          onClose={() => setRevoking(null)}
        >
          <p>
            Role <code>{revoking.role}</code> will need a review again for every <code>{revoking.tool}</code> call
            beyond its risk limit. This takes effect at once and is logged.
          </p>
          <label for="revoke-reason">Reason (recorded in the log)</label>
          <input
            id="revoke-reason"
            data-testid="revoke-reason"
            value={reason}
            maxLength={1000}
            onInput={(e) => setReason((e.target as HTMLInputElement).value)}
            placeholder="e.g. the tool now writes"
          />
        </ConfirmDialog>
      )}
    </div>
  );
}
