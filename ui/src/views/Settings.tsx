import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { isDesktop, setToken, token } from '../lib/config';
import { deleteKey, ed25519Supported, ensureKey, loadKey } from '../lib/browserKey';
import { desktopApproverInfo, desktopErrorMessage } from '../lib/desktop';
import { useResource } from '../lib/hooks';
import { ConfirmDialog } from '../components/Dialog';
import { AgentHooksCard } from '../components/AgentHooks';
import { ConnectClients } from '../components/ConnectClients';
import { AdminKeys } from '../components/AdminKeys';
import { AlertSinks } from '../components/AlertSinks';
import { CopyButton, Hash, Icon, SkeletonBlock } from '../components/ui';

interface KeyInfo {
  keyId: string;
  fingerprint: string;
  publicKeyHex: string;
  where: string;
}

const IDENTITY_KEY = 'interlock.identity';

function ApiKeyCard() {
  const [value, setValue] = useState(token());
  const [show, setShow] = useState(false);
  const [state, setState] = useState<{ ok: boolean; text: string } | null>(null);
  const check = async () => {
    try {
      const r = await api.inbox();
      setState({ ok: true, text: `Connected: ${r.items.length} item${r.items.length === 1 ? '' : 's'} in the inbox.` });
    } catch (e) {
      setState({ ok: false, text: (e as Error).message });
    }
  };
  useEffect(() => {
    if (token()) void check();
  }, []);
  if (isDesktop())
    return (
      <div class="card">
        <div class="card-head">
          <h3>Reviewer API key</h3>
        </div>
        <div class="card-body">
          <p style={{ margin: 0 }}>Provided by the desktop app.</p>
          {state && <div class={`verify ${state.ok ? 'ok' : 'bad'}`} style={{ marginTop: '10px' }}>{state.text}</div>}
        </div>
      </div>
    );
  return (
    <div class="card">
      <div class="card-head">
        <h3>Reviewer API key</h3>
      </div>
      <form
        class="card-body"
        onSubmit={(e) => {
          e.preventDefault();
          setToken(value);
          setState(null);
          if (value.trim()) void check();
        }}
      >
        <div class="field">
          <label for="api-key">API key</label>
          <div class="row-gap" style={{ flexWrap: 'nowrap' }}>
            <input
              id="api-key"
              name="api-key"
              type={show ? 'text' : 'password'}
              value={value}
              placeholder="ilk_…"
              autocomplete="off"
              spellcheck={false}
              onInput={(e) => setValue((e.target as HTMLInputElement).value)}
              style={{ fontFamily: 'var(--mono)' }}
            />
            <button type="button" class="btn" onClick={() => setShow(!show)} style={{ width: '76px' }}>
              {show ? 'Hide' : 'Show'}
            </button>
            <button type="submit" class="btn primary" data-testid="save-key">
              Save
            </button>
          </div>
          <div class="help">
            An admin creates one with <code>interlock reviewers add NAME</code>, or prints a one-time link that signs
            this browser in with <code>interlock signin-link</code>. It is kept in this browser’s local
            storage. It lets this page read and submit signed decisions; it cannot approve anything by itself.
          </div>
        </div>
        <div style={{ minHeight: '38px' }}>
          {state && (
            <div class={`verify ${state.ok ? 'ok' : 'bad'}`} data-testid="key-state">
              {state.text}
            </div>
          )}
        </div>
      </form>
    </div>
  );
}

function ApproverCard() {
  const desktop = isDesktop();
  const [info, setInfo] = useState<KeyInfo | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [supported, setSupported] = useState<boolean | null>(desktop ? true : null);
  const [identity, setIdentity] = useState(() => localStorage.getItem(IDENTITY_KEY) ?? '');
  const [forget, setForget] = useState(false);
  const approvers = useResource(() => api.approvers(), []);
  const load = async () => {
    setError(null);
    try {
      if (desktop) {
        const a = await desktopApproverInfo();
        setInfo({ keyId: a.key_id, fingerprint: a.fingerprint, publicKeyHex: a.public_key, where: 'the OS keychain (desktop app)' });
        return;
      }
      const ok = await ed25519Supported();
      setSupported(ok);
      if (!ok) return;
      const k = (await loadKey()) ?? (await ensureKey());
      setInfo({ keyId: k.keyId, fingerprint: k.fingerprint, publicKeyHex: k.publicKeyHex, where: 'this browser (IndexedDB, non-extractable)' });
    } catch (e) {
      setError(desktop ? desktopErrorMessage(e) : (e as Error).message);
    }
  };
  useEffect(() => {
    void load();
  }, []);
  const registered = info && approvers.data?.approvers.find((a) => a.key_id === info.keyId);
  const name = identity.trim().replace(/^human:/, '') || 'YOUR-NAME';
  const command = info ? `interlock keys register --public-key ${info.publicKeyHex} --identity human:${name}` : '';
  return (
    <div class="card">
      <div class="card-head">
        <h3>Approver key</h3>
        <span class="right">
          {info &&
            (registered ? (
              <span class="status s-APPROVED" data-testid="key-registered">
                REGISTERED · {registered.identity}
              </span>
            ) : approvers.data ? (
              <span class="status s-PENDING" data-testid="key-unregistered">
                NOT REGISTERED
              </span>
            ) : null)}
        </span>
      </div>
      {supported === false ? (
        <div class="card-body">
          <div class="banner bad" style={{ margin: 0 }}>
            <Icon name="alert" />
            <div>
              <b>This browser’s WebCrypto has no Ed25519</b>
              <span>Decisions cannot be signed here. Use a current Chromium, Firefox or Safari, or the desktop app.</span>
            </div>
          </div>
        </div>
      ) : !info && !error ? (
        <SkeletonBlock lines={4} />
      ) : (
        <div class="card-body">
          {error && (
            <div class="error-box" role="alert" style={{ marginTop: 0, marginBottom: '12px' }}>
              {error}
            </div>
          )}
          {info && (
            <>
              <dl class="kv" style={{ marginBottom: '16px' }}>
                <dt>Fingerprint</dt>
                <dd>
                  <code data-testid="fingerprint" style={{ fontSize: '14px', fontWeight: 600 }}>
                    {info.fingerprint}
                  </code>
                </dd>
                <dt>Public key</dt>
                <dd data-testid="public-key">
                  <Hash value={info.publicKeyHex} />
                </dd>
                <dt>Key id</dt>
                <dd>
                  <Hash value={info.keyId} />
                </dd>
                <dt>Private key</dt>
                <dd class="muted">in {info.where}; it never leaves</dd>
              </dl>
              {!registered && (
                <>
                  <div class="field">
                    <label for="identity">Your name, as the log should record it</label>
                    <input
                      id="identity"
                      type="text"
                      value={identity}
                      placeholder="alice"
                      onInput={(e) => {
                        const v = (e.target as HTMLInputElement).value;
                        setIdentity(v);
                        localStorage.setItem(IDENTITY_KEY, v);
                      }}
                    />
                  </div>
                  <div class="sub-h">An admin registers this key once, on the gateway’s machine:</div>
                  <div class="cmd" data-testid="register-command">
                    <code>{command}</code>
                    <CopyButton text={command} />
                  </div>
                  <div class="help">
                    Compare the fingerprint <b>{info.fingerprint}</b> with what the admin sees before they run it. Until
                    then the gateway refuses this key’s decisions (422).
                  </div>
                </>
              )}
              {!desktop && (
                <div class="row-gap" style={{ marginTop: '16px' }}>
                  <button class="btn small" onClick={() => approvers.reload()}>
                    Check registration
                  </button>
                  <span class="spacer" />
                  <button class="btn small danger" onClick={() => setForget(true)}>
                    Forget this key…
                  </button>
                </div>
              )}
            </>
          )}
        </div>
      )}
      {forget && (
        <ConfirmDialog
          title="Forget this browser’s approver key?"
          confirm="Forget the key"
          danger
          onClose={() => setForget(false)}
          onConfirm={() => {
            setForget(false);
            setInfo(null);
            void deleteKey().then(load);
          }}
        >
          A new key will be made, and it must be registered again before you can decide anything. The old key stays
          registered until an admin removes it.
        </ConfirmDialog>
      )}
    </div>
  );
}

export function Settings() {
  return (
    <div class="page settings">
      <div class="page-head">
        <div>
          <h1>Settings</h1>
          <div class="sub">{isDesktop() ? 'Desktop app' : 'This browser'}</div>
        </div>
      </div>
      <ApiKeyCard />
      <ApproverCard />
      {token() && <ConnectClients />}
      {token() && <AgentHooksCard />}
      {!isDesktop() && <AdminKeys />}
      {token() && <AlertSinks />}
    </div>
  );
}
