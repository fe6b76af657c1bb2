import { useEffect, useRef, useState } from 'preact/hooks';
import { setToken } from '../lib/config';
import { ed25519Supported, ensureKey, type BrowserKey } from '../lib/browserKey';
import { NAME_PATTERN, redeemSignin } from '../lib/signin';
import { toast } from '../components/Toasts';
import { Icon } from '../components/ui';

// Shared with Settings: the name decisions are signed under.
const IDENTITY_KEY = 'interlock.identity';

/** `#/signin/<token>`: this browser becomes a reviewer of the gateway serving it. */
export function Signin({ token }: { token: string }) {
  const [name, setName] = useState(() => (localStorage.getItem(IDENTITY_KEY) ?? '').replace(/^human:/, ''));
  const [key, setKey] = useState<BrowserKey | null>(null);
  const [supported, setSupported] = useState<boolean | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    void ed25519Supported().then(async (ok) => {
      setSupported(ok);
      if (!ok) return;
      try {
        setKey(await ensureKey());
      } catch (e) {
        setError((e as Error).message);
      }
    });
    input.current?.focus();
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!key || busy) return;
    setBusy(true);
    setError(null);
    try {
      const r = await redeemSignin(token, key.publicKeyHex, name.trim());
      localStorage.setItem(IDENTITY_KEY, name.trim());
      // The token is spent: take it out of the history, so Back does not offer it.
      history.replaceState(null, '', `${location.pathname}${location.search}#/inbox`);
      window.dispatchEvent(new HashChangeEvent('hashchange'));
      setToken(r.key);
      toast(`Signed in as ${r.identity}: this browser can review and approve.`, 'info');
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };

  return (
    <div class="page signin" data-testid="signin">
      <div class="page-head">
        <div>
          <h1>Sign in to this gateway</h1>
          <div class="sub">{location.host}</div>
        </div>
      </div>
      <form class="card" onSubmit={submit} style={{ maxWidth: '640px' }}>
        <div class="card-head">
          <h3>Make this browser a reviewer</h3>
        </div>
        <div class="card-body">
          <p style={{ marginTop: 0 }}>
            This one-time link gives this browser a reviewer API key, and registers a signing key made here as an
            approver. The private half of that key stays in this browser (non-extractable); decisions are signed with
            it.
          </p>
          {supported === false ? (
            <div class="banner bad" role="alert" style={{ margin: 0 }}>
              <Icon name="alert" />
              <div>
                <b>This browser’s WebCrypto has no Ed25519</b>
                <span>Decisions cannot be signed here. Use a current Chromium, Firefox or Safari.</span>
              </div>
            </div>
          ) : (
            <>
              <div class="field">
                <label for="signin-name">Your name, as the log should record it</label>
                <input
                  id="signin-name"
                  ref={input}
                  type="text"
                  required
                  pattern={NAME_PATTERN}
                  title="Letters, digits, '.', '_', '-' or '@' (up to 64)"
                  value={name}
                  placeholder="alice"
                  autocomplete="username"
                  spellcheck={false}
                  onInput={(e) => setName((e.target as HTMLInputElement).value)}
                />
                <div class="help">
                  Decisions from this browser are signed as <code>human:{name.trim() || 'NAME'}</code>.
                </div>
              </div>
              <dl class="kv" style={{ marginBottom: '16px', minHeight: '22px' }}>
                <dt>Signing key</dt>
                <dd>
                  <code data-testid="signin-fingerprint">{key ? key.fingerprint : '…'}</code>
                </dd>
              </dl>
              <div class="row-gap">
                <button type="submit" class="btn primary" data-testid="signin-submit" disabled={!key || busy}>
                  {busy ? 'Signing in…' : 'Sign in'}
                </button>
                <span class="faint">The link works once, for 15 minutes.</span>
              </div>
              {/* Below the button: an error grows the card, it moves no control. */}
              {error && (
                <div class="error-box" role="alert" data-testid="signin-error" style={{ marginBottom: 0 }}>
                  {error}
                </div>
              )}
            </>
          )}
        </div>
      </form>
    </div>
  );
}
