import { useEffect, useState } from 'preact/hooks';
import { api, type InboxItem } from '../lib/api';
import { serverRisk } from '../lib/serverReview';
import { isDesktop } from '../lib/config';
import { loadKey } from '../lib/browserKey';
import { desktopApproverInfo, desktopErrorMessage } from '../lib/desktop';
import { useLive, useResource } from '../lib/hooks';
import { href } from '../lib/router';
import { ConnectClients } from '../components/ConnectClients';
import { RiskBadge, Status } from '../components/ui';

/** The approver key this face signs with, where it lives, and whether the gateway trusts it yet. */
function KeyStep() {
  const desktop = isDesktop();
  // undefined: loading; null: no key yet (a browser makes one in Settings).
  const [key, setKey] = useState<{ fingerprint: string; keyId: string } | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const approvers = useResource(() => api.approvers(), []);
  useEffect(() => {
    (desktop
      ? desktopApproverInfo().then((a) => ({ fingerprint: a.fingerprint, keyId: a.key_id }))
      : loadKey().then((k) => (k ? { fingerprint: k.fingerprint, keyId: k.keyId } : null))
    ).then(setKey, (e) => setError(desktop ? desktopErrorMessage(e) : (e as Error).message));
  }, []);
  const registered = key && approvers.data?.approvers.find((a) => a.key_id === key.keyId);
  // READY only when there is a key and the gateway lists it among its approvers.
  const state = error ? 'error' : key === undefined || (key && !approvers.data && !approvers.error) ? 'loading' : !key ? 'none' : registered ? 'ready' : 'unregistered';
  return (
    <div class="card" data-testid="welcome-key" data-state={state}>
      <div class="card-head">
        <h3>1 · Your approver key</h3>
        <span class="right" data-testid="welcome-key-state">
          {state === 'ready' && <span class="status s-APPROVED">READY</span>}
          {state === 'none' && <span class="status s-PENDING">NO KEY YET</span>}
          {state === 'unregistered' && <span class="status s-PENDING">NOT REGISTERED</span>}
        </span>
      </div>
      <div class="card-body">
        {error ? (
          <div class="error-box" role="alert" style={{ margin: 0 }}>
            {error}
          </div>
        ) : state === 'loading' ? (
          <p class="muted" style={{ margin: 0 }}>
            Looking for it…
          </p>
        ) : state === 'none' ? (
          <p style={{ margin: 0 }} data-testid="welcome-key-text">
            This browser has no approver key yet, so it cannot sign a decision. Open <a href={href.settings()}>Settings</a>: it
            makes one here (the private half never leaves this browser) and shows the one command an admin runs to
            register it.
          </p>
        ) : (
          <p style={{ margin: 0 }} data-testid="welcome-key-text">
            {desktop
              ? 'Created in the OS keychain when Interlock first started; the private key never leaves the keychain.'
              : 'Made in this browser (non-extractable); the private key never leaves it.'}{' '}
            {registered
              ? `The gateway trusts it (registered as ${registered.identity}): it signs every decision you make here.`
              : 'The gateway does not list it among its approvers yet, so it refuses the decisions it signs: '}
            {!registered && (
              <>
                <a href={href.settings()}>Settings</a> shows the command an admin runs once to register it.
              </>
            )}{' '}
            Fingerprint <code data-testid="welcome-fingerprint">{key!.fingerprint}</code>.
          </p>
        )}
      </div>
    </div>
  );
}

/** The risk the inbox shows for the same item: a plan's own, a server's first-contact risk or worst drift. */
function ArrivedRisk({ i }: { i: InboxItem }) {
  if (i.kind === 'plan') return <RiskBadge risk={i.risk} label="Risk" />;
  const { risk, label } = serverRisk(i);
  return risk ? <RiskBadge risk={risk} label={label} /> : <span class="faint" style={{ fontSize: '12px' }}>no drift</span>;
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
          Nothing waits for review yet. The servers Connect adds start at once, no restart needed, and show here and in the
          inbox, pending your review.
        </p>
      ) : (
        <table class="kv-table arrived-table">
          <tbody>
            {items.map((i) => (
              <tr key={`${i.kind}:${i.kind === 'plan' ? i.plan_id : i.name}`} data-testid="arrived" data-key={`${i.kind}:${i.kind === 'plan' ? i.plan_id : i.name}`}>
                <td>
                  <a href={i.kind === 'plan' ? href.plan(i.plan_id) : href.server(i.name)}>
                    {i.kind === 'plan' ? i.title : <code>{i.name}</code>}
                  </a>
                </td>
                <td>
                  <ArrivedRisk i={i} />
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
