// Where the API is and how to authenticate: injected by the desktop app, or
// same-origin with a reviewer API key the user typed once (browser).

export interface DesktopConfig {
  desktop: true;
  apiBase: string;
  token: string;
  /** The desktop app's bridges (preferred over window.__TAURI__ when present). */
  decide?: (args: Record<string, unknown>) => Promise<Record<string, unknown>>;
  approverInfo?: () => Promise<unknown>;
  /** Connects or undoes an AI client after the app's native confirmation (an owner action). */
  changeClient?: (args: { client: string; change: 'connect' | 'undo' }) => Promise<unknown>;
  /** Installs or removes a coding agent's hooks after the app's native confirmation (an owner action). */
  changeHooks?: (args: { client: string; change: 'install' | 'undo'; onUnreachable: OnUnreachable }) => Promise<unknown>;
}

/** What a coding agent's hook does when the gateway cannot answer. */
export type OnUnreachable = 'deny' | 'ask';

declare global {
  interface Window {
    __INTERLOCK__?: DesktopConfig;
    __TAURI__?: { core: { invoke<T>(cmd: string, args?: Record<string, unknown>): Promise<T> } };
  }
}

const TOKEN_KEY = 'interlock.apiKey';

export function desktop(): DesktopConfig | null {
  const c = typeof window !== 'undefined' ? window.__INTERLOCK__ : undefined;
  return c && c.desktop ? c : null;
}

export function isDesktop(): boolean {
  return desktop() !== null;
}

export function apiBase(): string {
  return (desktop()?.apiBase ?? '').replace(/\/+$/, '');
}

export function token(): string {
  const d = desktop();
  if (d) return d.token;
  try {
    return localStorage.getItem(TOKEN_KEY) ?? '';
  } catch {
    return '';
  }
}

const listeners = new Set<() => void>();

export function setToken(t: string): void {
  if (isDesktop()) return;
  if (t) localStorage.setItem(TOKEN_KEY, t.trim());
  else localStorage.removeItem(TOKEN_KEY);
  listeners.forEach((f) => f());
}

/** Called when the API key changes (reconnect the event stream, reload). */
export function onTokenChange(f: () => void): () => void {
  listeners.add(f);
  return () => listeners.delete(f);
}
