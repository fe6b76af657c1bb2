// "Guard a coding agent's own tools" (/api/v1/hooks, issue 40): each coding agent's
// user settings, and the diff installing Interlock's hooks there would write.

import { request } from './api';
import { desktop, type OnUnreachable } from './config';

export type { OnUnreachable };

export interface HookPlan {
  changes_anything: boolean;
  /** A unified diff of the settings file; agent keys and secrets masked by the gateway. */
  diff: string;
}

export interface AgentHooks {
  client: string;
  name: string;
  file: string;
  exists: boolean;
  /** Interlock's hooks were installed there and can be undone. */
  installed: boolean;
  plan: HookPlan | { error: string };
  /** What the person must still do before the agent runs the hook (Codex: trust it in `/hooks`). */
  still_to_do: string | null;
}

export interface HooksPreview {
  clients: AgentHooks[];
  gateway: string;
  program: string;
  on_unreachable: OnUnreachable;
}

export interface HooksInstalled {
  file: string;
  changed: boolean;
  agent: string | null;
  still_to_do?: string | null;
}

export interface HooksUndone {
  file: string;
  removed: boolean;
  agent_revoked: string | null;
}

/** The command the machine's owner runs instead, outside the desktop app. */
export function hooksCommand(slug: string, change: 'install' | 'undo', onUnreachable: OnUnreachable = 'deny'): string {
  if (change === 'undo') return `interlock hooks install ${slug} --undo`;
  return `interlock hooks install ${slug} --yes${onUnreachable === 'ask' ? ' --on-unreachable ask' : ''}`;
}

/** Whether this page may install hooks itself (the desktop app, which asks its owner natively). */
export function canChangeHooks(): boolean {
  return !!desktop()?.changeHooks;
}

/**
 * Installing rewrites a file the agent runs and undoing takes its guard away: the owner's actions, which the
 * reviewer API refuses. Only the desktop app does them, after its native confirmation; elsewhere the page shows
 * the command to run.
 */
function changeHooks<T>(slug: string, change: 'install' | 'undo', onUnreachable: OnUnreachable): Promise<T> {
  const bridge = desktop()?.changeHooks;
  if (!bridge) return Promise.reject(new Error(`Run \`${hooksCommand(slug, change, onUnreachable)}\` in a terminal on this machine.`));
  return bridge({ client: slug, change, onUnreachable }) as Promise<T>;
}

export function isHookPlan(p: AgentHooks['plan']): p is HookPlan {
  return !('error' in p);
}

/** The diff's lines added and removed (its `+++`/`---` headers aside). */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++') || line.startsWith('---')) continue;
    if (line.startsWith('+')) added++;
    else if (line.startsWith('-')) removed++;
  }
  return { added, removed };
}

export const agentHooks = {
  list: (onUnreachable: OnUnreachable) =>
    request<HooksPreview>(`/api/v1/hooks${onUnreachable === 'ask' ? '?on_unreachable=ask' : ''}`),
  install: (slug: string, onUnreachable: OnUnreachable) => changeHooks<HooksInstalled>(slug, 'install', onUnreachable),
  undo: (slug: string) => changeHooks<HooksUndone>(slug, 'undo', 'deny'),
};
