// The desktop app's side of signing: a thin adapter over Tauri's invoke. The
// desktop signs in Rust with the OS-keychain key; no key material is in the web view.

import type { DecisionKind, SubjectKind } from './statement';

export interface ApproverInfo {
  key_id: string;
  fingerprint: string;
  public_key: string;
}

function invoke<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  const t = window.__TAURI__?.core?.invoke;
  if (!t) return Promise.reject(new Error('The desktop bridge (window.__TAURI__) is missing.'));
  return t<T>(cmd, args);
}

export function desktopDecide(a: {
  /** A plan, a server's surface, one tool (`<server>/<tool>`), or a server's removal. */
  subjectKind: SubjectKind | 'removal';
  subject: string;
  hash: string;
  decision: DecisionKind;
  reason: string;
  /** A held call's approval scope (once, session, hour, arguments). */
  scope?: string;
}): Promise<Record<string, unknown>> {
  // The app's init script may hand the bridge over directly (the UI is loaded from
  // the gateway's origin, where window.__TAURI__ is not necessarily exposed).
  const bridge = window.__INTERLOCK__?.decide;
  return bridge ? bridge({ ...a }) : invoke('decide', { ...a });
}

export function desktopApproverInfo(): Promise<ApproverInfo> {
  const bridge = window.__INTERLOCK__?.approverInfo;
  return (bridge ? bridge() : invoke('approver_info')) as Promise<ApproverInfo>;
}

/** The desktop reports `{code: 'changed'}` when the item is no longer what was shown. */
export function desktopErrorCode(e: unknown): string | undefined {
  return e && typeof e === 'object' && typeof (e as { code?: unknown }).code === 'string'
    ? (e as { code: string }).code
    : undefined;
}

/** A Tauri command error may be a string or an object: make it a message. */
export function desktopErrorMessage(e: unknown): string {
  if (typeof e === 'string') return e;
  if (e && typeof e === 'object') {
    const o = e as { message?: unknown; error?: { message?: unknown } };
    if (typeof o.error?.message === 'string') return o.error.message;
    if (typeof o.message === 'string') return o.message;
  }
  return String(e);
}
