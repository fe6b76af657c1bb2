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
