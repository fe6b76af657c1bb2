import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { isDesktop } from '../lib/config';
import { loadKey } from '../lib/browserKey';
import { desktopApproverInfo, desktopErrorMessage } from '../lib/desktop';
import { useLive, useResource } from '../lib/hooks';
import { href } from '../lib/router';
import { ConnectClients } from '../components/ConnectClients';
import { RiskBadge, Status } from '../components/ui';

/** The approver key this face signs with, and where it lives. */
function KeyStep() {
  const desktop = isDesktop();
  const [fp, setFp] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    (desktop ? desktopApproverInfo().then((a) => a.fingerprint) : loadKey().then((k) => k?.fingerprint ?? null)).then(
      setFp,
      (e) => setError(desktop ? desktopErrorMessage(e) : (e as Error).message),
    );
  }, []);
  return (
    <div class="card" data-testid="welcome-key">
      <div class="card-head">
        <h3>1 · Your approver key</h3>
        <span class="right">{fp && <span class="status s-APPROVED">READY</span>}</span>
      </div>
      <div class="card-body">
        {error ? (
          <div class="error-box" role="alert" style={{ margin: 0 }}>
            {error}
          </div>
        ) : (
          <p style={{ margin: 0 }}>
            {desktop
              ? 'Created in the OS keychain when Interlock first started. It signs every decision you make here; the private key never leaves the keychain.'
              : 'Made in this browser (non-extractable) and registered with the gateway when you signed in. It signs every decision you make here.'}{' '}
            Fingerprint <code data-testid="welcome-fingerprint">{fp ?? '…'}</code>.
          </p>
        )}
      </div>
    </div>
  );
}

/** What waits for review: the servers (and plans) that arrived. */
function ArrivedStep() {
  const inbox = useResource(() => api.inbox(), []);
  useLive(() => true, inbox.reload);
  const items = inbox.data?.items ?? [];
  return (
    <div class="card" data-testid="welcome-arrived">
      <div class="card-head">
        <h3>3 · What arrived</h3>
        <span class="faint" style={{ marginLeft: 'auto' }}>
          nothing of a server is served until you approve it
        </span>
      </div>
      {items.length === 0 ? (
        <p class="muted" style={{ margin: '12px 16px' }}>
          Nothing waits for review yet. Servers added by Connect start when the gateway starts again: quit Interlock from
          the tray and open it (headless: restart <code>interlock serve</code>).
        </p>
      ) : (
        <table class="kv-table">
          <tbody>
            {items.map((i) => (
              <tr key={`${i.kind}:${i.kind === 'plan' ? i.plan_id : i.name}`} data-testid="arrived" data-key={`${i.kind}:${i.kind === 'plan' ? i.plan_id : i.name}`}>
                <td style={{ width: '40%' }}>
                  <a href={i.kind === 'plan' ? href.plan(i.plan_id) : href.server(i.name)}>
                    {i.kind === 'plan' ? i.title : <code>{i.name}</code>}
                  </a>
                </td>
                <td>
                  <RiskBadge risk={i.risk} />
                </td>
                <td style={{ textAlign: 'right' }}>
                  <Status status={i.status} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** `#/welcome`: the first run — the key, the clients to connect, what arrived. */
export function Welcome() {
  return (
    <div class="page settings" data-testid="welcome">
      <div class="page-head">
        <div>
          <h1>Welcome to Interlock</h1>
          <div class="sub">Agents propose; you countersign the exact bytes; only then does anything run.</div>
        </div>
        <div class="actions">
          <a class="btn primary" href={href.inbox()} data-testid="welcome-done">
            Go to the inbox
          </a>
        </div>
      </div>
      <KeyStep />
      <ConnectClients onlyFound title="2 · Connect the AI clients found here" />
      <ArrivedStep />
    </div>
  );
}
