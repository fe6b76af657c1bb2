// Removing a server (issue 20): a decision like any other, signed in this
// browser with its approver key — an approval of `server-removal:<name>` at
// the hash the gateway gives for the server's name and transport — and
// verified by the gateway (registered key, audience, policy, one-shot nonce).
// In the desktop app the keychain key signs it, in Rust (issue 46: the window
// had no Remove).

import { useState } from 'preact/hooks';
import { ApiError, request, type ServerDetail } from '../lib/api';
import { isDesktop } from '../lib/config';
import { desktopDecide, desktopErrorCode, desktopErrorMessage } from '../lib/desktop';
import { ensureKey, sign } from '../lib/browserKey';
import { buildStatement, envelope, reasonError, signingInput } from '../lib/statement';
import { go, href } from '../lib/router';
import { ConfirmDialog } from './Dialog';
import { Ticked } from './ui';
import { toast } from './Toasts';

export function RemoveServer({ name, d }: { name: string; d: ServerDetail | null }) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (!d) return null;
  const remove = async () => {
    const bad = reasonError(reason);
    if (bad) {
      setError(bad);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const terms = await request<{ subject: string; hash: string }>(`/api/v1/servers/${encodeURIComponent(name)}/removal`);
      if (isDesktop()) {
        try {
          await desktopDecide({ subjectKind: 'removal', subject: name, hash: terms.hash, decision: 'approve', reason });
        } catch (e) {
          throw new ApiError(0, desktopErrorCode(e) ?? 'desktop', desktopErrorMessage(e));
        }
        setOpen(false);
        toast(`Removed ${name}`, 'ok');
        go(href.servers());
        return;
      }
      const key = await ensureKey();
      const statement = buildStatement({
        planId: terms.subject,
        planHash: terms.hash,
        decision: 'approve',
        reason,
        approverKeyId: key.keyId,
        policyDigest: d.policy_digest,
        audience: d.audience,
        now: Date.now() / 1000,
      });
      const sig = await sign(key, signingInput(statement));
      await request(`/api/v1/servers/${encodeURIComponent(name)}/removal`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(envelope(statement, sig)),
      });
      setOpen(false);
      toast(`Removed ${name}`, 'ok');
      go(href.servers());
    } catch (e) {
      setError(e instanceof ApiError ? e.message : (e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="card remove-server" data-testid="remove-server">
      <div class="card-head">
        <h3>Remove this server</h3>
        <button class="btn small danger right" data-testid="remove-server-open" onClick={() => setOpen(true)}>
          Remove…
        </button>
      </div>
      {open && (
        <ConfirmDialog title={`Remove ${name}?`} confirm={busy ? 'Removing…' : 'Sign and remove'} danger onConfirm={() => void remove()} onClose={() => setOpen(false)}>
          <p style={{ marginTop: 0 }}>
            The gateway stops it at once: its tools leave every agent's listing and it leaves the gateway's config. Added again,
            it starts pending. Your approver key signs the removal ({isDesktop() ? 'this computer’s keychain key' : 'this browser’s key'}); it is logged.
          </p>
          <div class="field">
            <label for="remove-reason">Why</label>
            <input
              id="remove-reason"
              type="text"
              value={reason}
              data-testid="remove-reason"
              onInput={(e) => {
                setReason((e.target as HTMLInputElement).value);
                setError(null);
              }}
            />
          </div>
          {error && (
            <div class="error-box" role="alert" data-testid="remove-error">
              <Ticked text={error} />
            </div>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}
