// "Connect a client" (/api/v1/clients): the AI clients found on this machine,
// what connecting each would move behind the gateway, connect and undo.

import { request } from './api';
import { desktop } from './config';

export type ServerAction =
  | { name: string; action: 'import'; upstream: string; transport: string; secrets: string[]; dropped: string[]; shared: boolean; sandbox?: string | null }
  | { name: string; action: 'already' }
  | { name: string; action: 'keep'; reason: string };

export interface ConnectPlan {
  file: string;
  gateway_config: string;
  gateway_url: string;
  agent: string;
  changes_anything: boolean;
  entry: null | { name: string; reach: { kind: 'http'; url: string } | { kind: 'bridge'; command: string; url: string } };
  servers: ServerAction[];
}

export interface ClientInfo {
  client: string;
  name: string;
  file: string;
  found: boolean;
  undoable: boolean;
  plan: ConnectPlan | { error: string } | null;
}

export interface Connected {
  changed: boolean;
  /** The new upstreams the running gateway started, pending review. */
  started: string[];
  plan: ConnectPlan;
}

export interface Undone {
  file: string;
  merged: boolean;
  servers_removed: string[];
  /** Stopped in the running gateway (a removal signed with this machine's key). */
  servers_stopped?: string[];
  /** Still running, pending review (no approver key on this machine, or refused). */
  servers_still_running?: { name: string; why: string }[];
  tokens_removed: number;
  agent_revoked: string | null;
  layers_left: boolean;
}

/**
 * Connecting starts the client's servers as this machine's user and undoing removes them with a signed decision:
 * the owner's actions, which the reviewer API refuses. Only the desktop app does them, after its native
 * confirmation naming the commands; elsewhere the page shows the command to run (`ownerCommand`).
 */
function changeClient<T>(slug: string, change: 'connect' | 'undo'): Promise<T> {
  const bridge = desktop()?.changeClient;
  if (!bridge) return Promise.reject(new Error(`Run \`${ownerCommand(slug, change)}\` in a terminal on this machine.`));
  return bridge({ client: slug, change }) as Promise<T>;
}

/** The command the machine's owner runs instead, outside the desktop app. */
export function ownerCommand(slug: string, change: 'connect' | 'undo'): string {
  return change === 'connect' ? `interlock connect ${slug}` : `interlock connect --undo ${slug}`;
}

/** Whether this page may connect clients itself (the desktop app, which asks its owner natively). */
export function canChangeClients(): boolean {
  return !!desktop()?.changeClient;
}

export const clients = {
  list: () => request<{ clients: ClientInfo[]; gateway_url: string }>('/api/v1/clients'),
  connect: (slug: string) => changeClient<Connected>(slug, 'connect'),
  undo: (slug: string) => changeClient<Undone>(slug, 'undo'),
};

export function isPlan(p: ClientInfo['plan']): p is ConnectPlan {
  return !!p && !('error' in p);
}
