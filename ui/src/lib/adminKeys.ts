// The admin API (/api/v1/admin, issue 20): API keys and their settings, with an
// admin token (`ila_…`) of its own — never the reviewer key. The token is kept
// for this tab only (sessionStorage): closing the tab forgets it.

import { apiBase } from './config';
import { ApiError } from './api';

const TOKEN = 'interlock.adminToken';

export function adminToken(): string | null {
  return sessionStorage.getItem(TOKEN);
}

export function setAdminToken(t: string | null) {
  if (t) sessionStorage.setItem(TOKEN, t);
  else sessionStorage.removeItem(TOKEN);
}

export interface KeySettings {
  rate_per_minute: number | null;
  monthly_quota: number | null;
  max_response_bytes: number | null;
  max_array_items: number | null;
  response_policy: { pii?: string; secrets?: string; injection?: string } | null;
  /** The alert sinks (gateway.toml names) that receive this key's events (issue 21). */
  alert_sinks?: string[] | null;
  /** The minimum severity of those events; null: each sink's own. */
  alert_min_severity?: Severity | null;
  /** The key's limits on the LLM proxy (issue 42); null: none. */
  llm_limits?: LlmLimits | null;
  /** The key's prompt policy on the LLM proxy, narrowing the gateway's; null: the gateway's alone. */
  llm_policy?: LlmPolicy | null;
}

export interface LlmLimits {
  models: string[] | null;
  rate_per_minute: number | null;
  monthly_quota: number | null;
}

export const FAIL_MODES = ['fail_closed', 'fail_open', 'fail_open_safe'] as const;
export type FailMode = (typeof FAIL_MODES)[number];

export interface LlmPolicy {
  blocked_keywords: string[];
  blocked_topics: Record<string, string[]>;
  max_chars: number | null;
  fail_mode: FailMode | null;
  on_hit: 'block' | 'hold' | null;
  keep_prompt_text: boolean;
}

/** The LLM limits a form's fields make (models comma-separated, empty: every model); null when none is set. */
export function llmLimitsValue(models: string, rate: number | null, quota: number | null): LlmLimits | null {
  const list = sinksValue(models);
  if (list === null && rate === null && quota === null) return null;
  return { models: list, rate_per_minute: rate, monthly_quota: quota };
}

/** The LLM policy a form's fields make over `was` (the topics and length the form does not show are kept); null when it says nothing. */
export function llmPolicyValue(
  was: LlmPolicy | null | undefined,
  fields: { keywords: string; failMode: FailMode | ''; onHit: 'block' | 'hold' | ''; keepText: boolean },
): LlmPolicy | null {
  const p: LlmPolicy = {
    blocked_keywords: sinksValue(fields.keywords) ?? [],
    blocked_topics: was?.blocked_topics ?? {},
    max_chars: was?.max_chars ?? null,
    fail_mode: fields.failMode === '' ? null : fields.failMode,
    on_hit: fields.onHit === '' ? null : fields.onHit,
    keep_prompt_text: fields.keepText,
  };
  const empty =
    p.blocked_keywords.length === 0 &&
    Object.keys(p.blocked_topics).length === 0 &&
    p.max_chars === null &&
    p.fail_mode === null &&
    p.on_hit === null &&
    !p.keep_prompt_text;
  return empty ? null : p;
}

/** One line saying what a key's LLM settings do, for its row; '' when it has none. */
export function llmSummary(s: KeySettings): string {
  const out: string[] = [];
  const l = s.llm_limits;
  if (l?.models) out.push(`${l.models.join(', ')} only`);
  if (l?.rate_per_minute) out.push(`${l.rate_per_minute}/min`);
  if (l?.monthly_quota) out.push(`${l.monthly_quota}/month`);
  const p = s.llm_policy;
  if (p?.on_hit === 'hold') out.push('holds what the scan stops');
  if (p?.fail_mode) out.push(p.fail_mode.replace(/_/g, ' '));
  if (p && p.blocked_keywords.length > 0) out.push(`${p.blocked_keywords.length} blocked word${p.blocked_keywords.length === 1 ? '' : 's'}`);
  if (p?.keep_prompt_text) out.push('keeps prompt text');
  return out.join(' · ');
}

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** An alert sinks field's text (comma-separated names) → the API's value: empty is none. */
export function sinksValue(text: string): string[] | null {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return names.length === 0 ? null : [...new Set(names)];
}

export interface AdminKey {
  id: string;
  kind: 'agent' | 'reviewer';
  name: string;
  role: string;
  shadow: boolean;
  created_at: number;
  revoked_at: number | null;
  settings: KeySettings;
}

export interface WhoAmI {
  name: string;
  scope: 'owner' | 'operator' | 'security_reviewer' | 'auditor';
  permissions: string[];
}

/** What a settings form may send: absent kept, `null` cleared. */
export type SettingsPatch = Partial<{ role: string; shadow: boolean } & KeySettings>;

async function admin<T>(path: string, init: RequestInit = {}, token = adminToken()): Promise<T> {
  if (!token) throw new ApiError(401, 'no_token', 'No admin token yet.');
  let r: Response;
  try {
    r = await fetch(apiBase() + path, {
      ...init,
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json' },
    });
  } catch (e) {
    throw new ApiError(0, 'network', `The gateway is unreachable (${(e as Error).message}).`);
  }
  const body = await r.json().catch(() => null);
  if (!r.ok) {
    const err = (body as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(r.status, err?.code ?? 'http', err?.message ?? `HTTP ${r.status}`);
  }
  return body as T;
}

export const adminKeys = {
  whoami: (token?: string) => admin<WhoAmI>('/api/v1/admin/whoami', {}, token),
  list: () => admin<{ keys: AdminKey[] }>('/api/v1/admin/keys'),
  create: (body: { name: string; kind: 'agent' | 'reviewer' } & SettingsPatch) =>
    admin<{ key: string; id: string }>('/api/v1/admin/keys', { method: 'POST', body: JSON.stringify(body) }),
  update: (id: string, patch: SettingsPatch) =>
    admin<AdminKey>(`/api/v1/admin/keys/${id}`, { method: 'PATCH', body: JSON.stringify(patch) }),
  rotate: (id: string) => admin<{ key: string; id: string }>(`/api/v1/admin/keys/${id}/rotate`, { method: 'POST', body: '{}' }),
  revoke: (id: string) => admin<{ id: string }>(`/api/v1/admin/keys/${id}/revoke`, { method: 'POST', body: '{}' }),
};

/** A limit field's text → the API's value: empty is no limit. */
export function limitValue(text: string): number | null | 'invalid' {
  const t = text.trim();
  if (t === '') return null;
  if (!/^\d+$/.test(t) || Number(t) <= 0) return 'invalid';
  return Number(t);
}
