// Settings → Keys (issue 20): the gateway's API keys and their settings —
// role, shadow mode, rate per minute, monthly quota, response caps, the alert
// sinks that receive a key's events and their minimum severity, and an agent
// key's settings on the LLM proxy (models, rate, quota, blocked words, what a
// stopped request becomes, the judge's fail mode) — through
// the admin API, with an admin token kept for this tab only. What a token may
// change is its scope's (the gateway refuses the rest and says why).

import { useEffect, useState } from 'preact/hooks';
import {
  adminKeys,
  adminToken,
  limitValue,
  llmLimitsValue,
  llmPolicyValue,
  llmSummary,
  SEVERITIES,
  setAdminToken,
  sinksValue,
  type AdminKey,
  type FailMode,
  type SettingsPatch,
  type Severity,
  type WhoAmI,
} from '../lib/adminKeys';
import { ConfirmDialog } from './Dialog';
import { CopyButton } from './ui';
import { toast } from './Toasts';

const LIMITS = [
  ['rate_per_minute', 'Calls/min'],
  ['monthly_quota', 'Calls/month'],
  ['max_response_bytes', 'Max bytes'],
  ['max_array_items', 'Max items'],
] as const;

type LimitField = (typeof LIMITS)[number][0];

function limitText(n: number | null) {
  return n === null ? '—' : n.toLocaleString('en-US');
}

/** A key shown once (created or rotated), to copy. */
function NewKey({ name, value, onDone }: { name: string; value: string; onDone: () => void }) {
  return (
    <div class="verify ok" data-testid="admin-new-key" style={{ margin: '8px 16px' }}>
      <div>
        The key for <b>{name}</b>, shown once:
      </div>
      <div class="row-gap" style={{ marginTop: '6px', flexWrap: 'nowrap' }}>
        <code class="ellipsis" data-testid="admin-new-key-value" style={{ flex: 1 }}>
          {value}
        </code>
        <CopyButton text={value} />
        <button class="btn small" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

function EditRow({ k, onSaved, onCancel }: { k: AdminKey; onSaved: () => void; onCancel: () => void }) {
  const [role, setRole] = useState(k.role);
  const [shadow, setShadow] = useState(k.shadow);
  const [limits, setLimits] = useState<Record<LimitField, string>>(
    Object.fromEntries(LIMITS.map(([f]) => [f, k.settings[f] === null ? '' : String(k.settings[f])])) as Record<LimitField, string>,
  );
  const [sinks, setSinks] = useState((k.settings.alert_sinks ?? []).join(', '));
  const [minSeverity, setMinSeverity] = useState<Severity | ''>(k.settings.alert_min_severity ?? '');
  const llmWas = { limits: k.settings.llm_limits ?? null, policy: k.settings.llm_policy ?? null };
  const [models, setModels] = useState((llmWas.limits?.models ?? []).join(', '));
  const [llmRate, setLlmRate] = useState(llmWas.limits?.rate_per_minute ? String(llmWas.limits.rate_per_minute) : '');
  const [llmQuota, setLlmQuota] = useState(llmWas.limits?.monthly_quota ? String(llmWas.limits.monthly_quota) : '');
  const [keywords, setKeywords] = useState((llmWas.policy?.blocked_keywords ?? []).join(', '));
  const [failMode, setFailMode] = useState<FailMode | ''>(llmWas.policy?.fail_mode ?? '');
  const [onHit, setOnHit] = useState<'block' | 'hold' | ''>(llmWas.policy?.on_hit ?? '');
  const [keepText, setKeepText] = useState(llmWas.policy?.keep_prompt_text ?? false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    const patch: SettingsPatch = {};
    if (role !== k.role) patch.role = role;
    if (shadow !== k.shadow) patch.shadow = shadow;
    for (const [f, label] of LIMITS) {
      const v = limitValue(limits[f]);
      if (v === 'invalid') {
        setError(`${label}: a positive whole number, or empty for no limit.`);
        return;
      }
      if (v !== k.settings[f]) patch[f] = v;
    }
    const sinkList = sinksValue(sinks);
    if (JSON.stringify(sinkList) !== JSON.stringify(k.settings.alert_sinks ?? null)) patch.alert_sinks = sinkList;
    const min = minSeverity === '' ? null : minSeverity;
    if (min !== (k.settings.alert_min_severity ?? null)) patch.alert_min_severity = min;
    if (k.kind === 'agent') {
      const rate = limitValue(llmRate);
      const quota = limitValue(llmQuota);
      if (rate === 'invalid' || quota === 'invalid') {
        setError('Model requests: a positive whole number, or empty for no limit.');
        return;
      }
      const limitsNow = llmLimitsValue(models, rate, quota);
      if (JSON.stringify(limitsNow) !== JSON.stringify(llmWas.limits)) patch.llm_limits = limitsNow;
      const policyNow = llmPolicyValue(llmWas.policy, { keywords, failMode, onHit, keepText });
      if (JSON.stringify(policyNow) !== JSON.stringify(llmWas.policy)) patch.llm_policy = policyNow;
    }
    if (Object.keys(patch).length === 0) {
      onCancel();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await adminKeys.update(k.id, patch);
      toast(`${k.name}: settings saved`, 'ok');
      onSaved();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <tr class="admin-edit" data-testid="admin-edit">
      <td colSpan={7}>
        <form onSubmit={(e) => void save(e)} class="admin-form">
          <div class="field">
            <label for={`role-${k.id}`}>Role</label>
            <input id={`role-${k.id}`} type="text" value={role} onInput={(e) => setRole((e.target as HTMLInputElement).value)} />
          </div>
          {LIMITS.map(([f, label]) => (
            <div class="field" key={f}>
              <label for={`${f}-${k.id}`}>{label}</label>
              <input
                id={`${f}-${k.id}`}
                type="text"
                inputMode="numeric"
                placeholder="no limit"
                value={limits[f]}
                data-testid={`admin-${f}`}
                onInput={(e) => setLimits({ ...limits, [f]: (e.target as HTMLInputElement).value })}
              />
            </div>
          ))}
          <div class="field admin-sinks">
            <label for={`sinks-${k.id}`}>Alert sinks</label>
            <input
              id={`sinks-${k.id}`}
              type="text"
              placeholder="none (names from gateway.toml)"
              title="The alert sinks that receive this key's events, comma-separated"
              value={sinks}
              data-testid="admin-alert-sinks"
              onInput={(e) => setSinks((e.target as HTMLInputElement).value)}
            />
          </div>
          <div class="field">
            <label for={`minsev-${k.id}`}>Alert minimum</label>
            <select
              id={`minsev-${k.id}`}
              value={minSeverity}
              data-testid="admin-alert-min"
              onChange={(e) => setMinSeverity((e.target as HTMLSelectElement).value as Severity | '')}
            >
              <option value="">each sink's own</option>
              {SEVERITIES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </div>
          <div class="field admin-shadow">
            <label>
              <input type="checkbox" checked={shadow} onChange={(e) => setShadow((e.target as HTMLInputElement).checked)} /> Shadow
              mode
            </label>
          </div>
          {k.kind === 'agent' && (
            <fieldset class="admin-llm" data-testid="admin-llm">
              <legend>Requests to models (the LLM proxy)</legend>
              <div class="field admin-sinks">
                <label for={`models-${k.id}`}>Models</label>
                <input
                  id={`models-${k.id}`}
                  type="text"
                  placeholder="every model the gateway serves"
                  value={models}
                  data-testid="admin-llm-models"
                  onInput={(e) => setModels((e.target as HTMLInputElement).value)}
                />
              </div>
              <div class="field">
                <label for={`llmrate-${k.id}`}>Requests / min</label>
                <input id={`llmrate-${k.id}`} type="text" inputMode="numeric" placeholder="no limit" value={llmRate} onInput={(e) => setLlmRate((e.target as HTMLInputElement).value)} />
              </div>
              <div class="field">
                <label for={`llmquota-${k.id}`}>Requests / month</label>
                <input id={`llmquota-${k.id}`} type="text" inputMode="numeric" placeholder="no limit" value={llmQuota} onInput={(e) => setLlmQuota((e.target as HTMLInputElement).value)} />
              </div>
              <div class="field admin-sinks">
                <label for={`keywords-${k.id}`}>Blocked words</label>
                <input
                  id={`keywords-${k.id}`}
                  type="text"
                  placeholder="only the gateway's"
                  title="Added to [llm.policy]'s, comma-separated"
                  value={keywords}
                  onInput={(e) => setKeywords((e.target as HTMLInputElement).value)}
                />
              </div>
              <div class="field">
                <label for={`onhit-${k.id}`} title="What a request the scan stops becomes">
                  Stopped requests
                </label>
                <select id={`onhit-${k.id}`} value={onHit} data-testid="admin-llm-on-hit" onChange={(e) => setOnHit((e.target as HTMLSelectElement).value as 'block' | 'hold' | '')}>
                  <option value="">gateway's</option>
                  <option value="block">refuse</option>
                  <option value="hold">hold for review</option>
                </select>
              </div>
              <div class="field">
                <label for={`failmode-${k.id}`} title="What a request becomes when the judge gives no verdict">
                  Judge unavailable
                </label>
                <select id={`failmode-${k.id}`} value={failMode} onChange={(e) => setFailMode((e.target as HTMLSelectElement).value as FailMode | '')}>
                  <option value="">gateway's</option>
                  <option value="fail_closed">refuse</option>
                  <option value="fail_open">send</option>
                  <option value="fail_open_safe">send without tool results</option>
                </select>
              </div>
              <div class="field admin-shadow">
                <label>
                  <input type="checkbox" checked={keepText} onChange={(e) => setKeepText((e.target as HTMLInputElement).checked)} /> Keep
                  prompt text on its receipts
                </label>
              </div>
            </fieldset>
          )}
          <div class="row-gap admin-form-actions">
            <button type="submit" class="btn small primary" disabled={busy} data-testid="admin-save">
              Save
            </button>
            <button type="button" class="btn small" onClick={onCancel}>
              Cancel
            </button>
          </div>
          {error && (
            <div class="error-box" role="alert" data-testid="admin-error">
              {error}
            </div>
          )}
        </form>
      </td>
    </tr>
  );
}

export function AdminKeys() {
  const [value, setValue] = useState('');
  const [me, setMe] = useState<WhoAmI | null>(null);
  const [keys, setKeys] = useState<AdminKey[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [shown, setShown] = useState<{ name: string; value: string } | null>(null);
  const [confirm, setConfirm] = useState<{ k: AdminKey; what: 'rotate' | 'revoke' } | null>(null);
  const [newName, setNewName] = useState('');

  const load = async () => {
    try {
      setKeys((await adminKeys.list()).keys);
      setError(null);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const signIn = async (t: string) => {
    try {
      const who = await adminKeys.whoami(t);
      setAdminToken(t);
      setMe(who);
      setError(null);
      await load();
    } catch (e) {
      setMe(null);
      setError((e as Error).message);
    }
  };
  useEffect(() => {
    const t = adminToken();
    if (t) void signIn(t);
  }, []);

  const act = async () => {
    if (!confirm) return;
    const { k, what } = confirm;
    setConfirm(null);
    try {
      if (what === 'rotate') {
        const r = await adminKeys.rotate(k.id);
        setShown({ name: k.name, value: r.key });
      } else {
        await adminKeys.revoke(k.id);
        toast(`${k.name}: key revoked`, 'info');
      }
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const create = async (e: Event) => {
    e.preventDefault();
    if (!newName.trim()) return;
    try {
      const r = await adminKeys.create({ name: newName.trim(), kind: 'agent' });
      setShown({ name: newName.trim(), value: r.key });
      setNewName('');
      await load();
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <div class="card admin-keys" data-testid="admin-keys">
      <div class="card-head">
        <h3>Keys</h3>
        <span class="faint right">
          {me ? (
            <span data-testid="admin-scope">
              admin token <b>{me.name}</b> · {me.scope.replace('_', ' ')}{' '}
              <button
                class="btn small"
                onClick={() => {
                  setAdminToken(null);
                  setMe(null);
                  setKeys(null);
                }}
              >
                Forget
              </button>
            </span>
          ) : (
            'API keys and their limits, with an admin token'
          )}
        </span>
      </div>
      {!me && (
        <form
          class="card-body"
          onSubmit={(e) => {
            e.preventDefault();
            void signIn(value.trim());
          }}
        >
          <div class="field">
            <label for="admin-token">Admin token</label>
            <div class="row-gap" style={{ flexWrap: 'nowrap' }}>
              <input
                id="admin-token"
                type="password"
                placeholder="ila_…"
                autocomplete="off"
                spellcheck={false}
                value={value}
                onInput={(e) => setValue((e.target as HTMLInputElement).value)}
                style={{ fontFamily: 'var(--mono)' }}
              />
              <button type="submit" class="btn primary" data-testid="admin-token-use">
                Use
              </button>
            </div>
            <div class="help">
              Mint one on the gateway's machine with <code>interlock admin token create NAME --scope owner</code>. It is kept
              for this tab only.
            </div>
          </div>
        </form>
      )}
      {error && (
        <div class="error-box" role="alert" data-testid="admin-keys-error" style={{ margin: '8px 16px' }}>
          {error}
        </div>
      )}
      {shown && <NewKey name={shown.name} value={shown.value} onDone={() => setShown(null)} />}
      {me && keys && (
        <>
          <table class="admin-table">
            <thead>
              <tr>
                <th>Key</th>
                <th>Role</th>
                {LIMITS.map(([f, label]) => (
                  <th key={f} class="num">
                    {label}
                  </th>
                ))}
                <th />
              </tr>
            </thead>
            <tbody>
              {keys
                .filter((k) => k.revoked_at === null)
                .flatMap((k) => [
                  <tr key={k.id} data-testid="admin-key" data-name={k.name}>
                    <td>
                      <b>{k.name}</b>
                      <div class="faint">{k.kind}</div>
                      {llmSummary(k.settings) && (
                        <div class="faint admin-key-llm" data-testid="admin-key-llm">
                          <span>models →</span> <span>{llmSummary(k.settings)}</span>
                        </div>
                      )}
                      {k.settings.alert_sinks && k.settings.alert_sinks.length > 0 && (
                        <div class="faint admin-key-alerts" data-testid="admin-key-alerts">
                          <span>alerts →</span> <span>{k.settings.alert_sinks.join(', ')}</span>
                          {k.settings.alert_min_severity && <span> (≥ {k.settings.alert_min_severity})</span>}
                        </div>
                      )}
                    </td>
                    <td>
                      {k.role}
                      {k.shadow && (
                        <div>
                          <span class="status s-PENDING" data-testid="admin-shadow">
                            SHADOW
                          </span>
                        </div>
                      )}
                    </td>
                    {LIMITS.map(([f]) => (
                      <td key={f} class="num" data-field={f}>
                        {limitText(k.settings[f])}
                      </td>
                    ))}
                    <td class="right nowrap">
                      <button class="btn small" data-testid="admin-edit-open" onClick={() => setEditing(editing === k.id ? null : k.id)}>
                        Edit
                      </button>{' '}
                      <button class="btn small" data-testid="admin-rotate" onClick={() => setConfirm({ k, what: 'rotate' })}>
                        Rotate
                      </button>{' '}
                      <button class="btn small danger" data-testid="admin-revoke" onClick={() => setConfirm({ k, what: 'revoke' })}>
                        Revoke
                      </button>
                    </td>
                  </tr>,
                  editing === k.id ? (
                    <EditRow
                      key={`${k.id}-edit`}
                      k={k}
                      onCancel={() => setEditing(null)}
                      onSaved={() => {
                        setEditing(null);
                        void load();
                      }}
                    />
                  ) : null,
                ])}
            </tbody>
          </table>
          <form class="card-body row-gap" style={{ flexWrap: 'nowrap' }} onSubmit={(e) => void create(e)}>
            <input
              type="text"
              placeholder="new agent key's name"
              value={newName}
              data-testid="admin-new-name"
              onInput={(e) => setNewName((e.target as HTMLInputElement).value)}
            />
            <button type="submit" class="btn" data-testid="admin-create">
              Create key
            </button>
          </form>
        </>
      )}
      {confirm && (
        <ConfirmDialog
          title={confirm.what === 'rotate' ? `Rotate ${confirm.k.name}'s key?` : `Revoke ${confirm.k.name}'s key?`}
          confirm={confirm.what === 'rotate' ? 'Rotate' : 'Revoke'}
          danger
          onConfirm={() => void act()}
          onClose={() => setConfirm(null)}
        >
          {confirm.what === 'rotate'
            ? 'A new key is made with the same settings; the current one stops working at once.'
            : 'The key stops working at once. This cannot be undone.'}
        </ConfirmDialog>
      )}
    </div>
  );
}
