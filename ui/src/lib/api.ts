// The reviewer API (/api/v1): typed reads, and the decisions endpoint.

import { apiBase, token } from './config';
import { splitToolSubject, type DsseEnvelope, type SubjectKind } from './statement';

export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const t = token();
  if (!t) throw new ApiError(401, 'no_key', 'No reviewer API key yet: add one in Settings.');
  let r: Response;
  try {
    r = await fetch(apiBase() + path, {
      ...init,
      headers: { Authorization: `Bearer ${t}`, Accept: 'application/json', ...(init.headers ?? {}) },
    });
  } catch (e) {
    throw new ApiError(0, 'network', `The gateway is unreachable (${(e as Error).message}).`);
  }
  const text = await r.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text */
  }
  if (!r.ok) {
    const err = (body as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(r.status, err?.code ?? 'http', err?.message ?? (text.trim() || `HTTP ${r.status}`));
  }
  return body as T;
}

export type Risk = 'low' | 'medium' | 'high' | 'critical';
export type Severity = 'info' | Risk;

export interface PlanSummary {
  plan_id: string;
  revision: number;
  plan_hash: string;
  title: string;
  proposer: string;
  risk: Risk;
  status: string;
  created_at: number;
  updated_at: number;
}

export interface BlockedContent {
  kind: 'prompt' | 'resource' | 'resource_template';
  key: string;
  why: string;
}

export interface BlockedTool {
  tool: string;
  action: string;
  why: string;
}

export interface Link {
  state: 'connecting' | 'up' | 'down';
  error?: string;
  retry_in_ms?: number;
  /** Listings that answered with an error and are served as last listed (issue 45 item 6). */
  stale_listings?: { method: string; error: string }[];
}

/** What a command server's sandbox grants it (issue 38), or why it will not start. */
export type SandboxGrants =
  | {
      program: string;
      read: string[];
      write: string[];
      net: 'none' | string[];
      limits: { memory_mb: number; open_files: number; cpu_secs: number; processes: number; file_size_mb: number };
    }
  | { error: string };

/** How a command server is started (pinned with its surface), now and at approval. */
export interface LaunchView {
  pinned: Record<string, unknown> | null;
  approved: Record<string, unknown> | null;
  /** Launch members that differ from the approved ones (`command`, `args`, `sandbox`, …). */
  changed: string[];
  sandbox_off: boolean;
  grants: SandboxGrants | null;
}

/** A stdio server a reviewer asked to run, waiting for the machine's owner (issue 39). */
export interface ServerRequest {
  server: { name: string; command?: string; args?: string[]; sandbox?: unknown };
  requested_by: string;
  requested_at: number;
  leaf: number;
}

export interface ServerSummary {
  name: string;
  status: string;
  configured: boolean;
  transport?: string | null;
  /** A command server's launch and sandbox; null for an HTTP server. */
  launch?: LaunchView | null;
  link?: Link | null;
  /** Prompts, resources, completions: served with the tools once approved (inspected; pinned when `pinned` names them). */
  also_offers?: string[];
  /** What of the surface is pinned (`pin = [...]` in gateway.toml). */
  pinned?: string[];
  /** How many prompts, resources and templates the observed surface pins. */
  pinned_content?: { prompts: number; resources: number; resource_templates: number } | null;
  /** Pinned prompts, resources and templates whose drift is held: not listed, not served. */
  blocked_content?: BlockedContent[];
  baseline_hash?: string | null;
  observed_hash?: string | null;
  tools?: number;
  served_tools?: number;
  blocked_tools?: BlockedTool[];
  drift_count?: number;
  worst_severity?: Severity | null;
  /** A PENDING server's first-contact risk (its whole surface scanned before approval). */
  risk?: Risk | null;
  /**
   * The server's one risk (issue 46), the same everywhere: the worst of what its
   * tools can do (`power`), its first-contact findings while pending, and its open drift.
   */
  risk_level?: Risk | null;
  /** Its tools worth a label for what they can do, with why. */
  power?: ToolPower[];
  version?: number;
  updated_at?: number;
}

export type InboxItem = (PlanSummary & { kind: 'plan' }) | (ServerSummary & { kind: 'server' });

export interface Decision {
  decision: 'approve' | 'reject';
  reason: string;
  approver_key_id: string;
  /** The identity the key was registered with (`human:jane`), when known. */
  approver_identity?: string | null;
  created_at: number;
  expires_at: number;
  consumed: boolean;
}

/** An object target (issue 23): a kind the policy declares, an id, its fields. */
export interface ObjectTarget {
  kind: string;
  id: string;
  [field: string]: unknown;
}

export type Target = string | ObjectTarget;

/** A typed expectation over a probe's value. */
export interface Expect {
  op: 'equals' | 'not_equals' | 'at_least' | 'at_most' | 'contains' | 'matches';
  value: unknown;
}

export interface Check {
  probe: string;
  target?: Target;
  params?: Record<string, unknown>;
  description?: string;
  expect?: Expect;
}

/** A compensating stage: a stage without id or rollback of its own. */
export type CompensatingStage = Omit<Stage, 'id' | 'rollback'>;

/** A described remedy, a compensating stage, or an irreversible stage's justification. */
export type Rollback = string | CompensatingStage | { irreversible: true; justification: string };

export interface Stage {
  id: string;
  action: string;
  target: Target;
  params?: Record<string, unknown>;
  preconditions?: Check[];
  verify?: Check[];
  rollback?: Rollback;
}

export interface PlanDocument {
  schema_version: string;
  plan_id: string;
  title: string;
  proposer: string;
  created_at: string;
  description?: string;
  body: { stages: Stage[]; [ext: string]: unknown };
}

export interface PlanDetail {
  plan: PlanSummary;
  document: PlanDocument | null;
  canonical: string;
  policy_digest: string;
  /** The gateway's log origin: the audience a statement for it must name. */
  audience: string;
  validation: { ok: boolean; violations: string[] };
  diff: string | null;
  revisions: PlanSummary[];
  decisions: Decision[];
}

export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface Surface {
  instructions: string | null;
  tools: Tool[];
}

export interface Drift {
  tool: string | null;
  kind: string;
  severity: Severity;
  action: string;
  scope: 'server' | 'tool';
  summary: string;
  findings: string[];
}

/** One thing the first-contact scan found in a pending server's surface. */
export interface FirstContactFinding {
  /** The tool it is in; null (or absent) for the server's instructions. */
  tool?: string | null;
  /** Where in the tool (or instructions): a JSON Pointer, e.g. /inputSchema/properties/name/description. */
  field: string;
  kind: string;
  excerpt: string;
}

/** What one tool can do, rated by the gateway (interlock_surface::power). */
export interface ToolPower {
  tool: string;
  risk: Risk;
  why: string;
}

export interface FirstContact {
  risk: Risk;
  /** Its tools worth a label for what they can do (part of `risk`). */
  power?: ToolPower[];
  findings: FirstContactFinding[];
}

/** A tool of the observed surface with the definition hash a per-tool decision signs. */
export interface ObservedTool {
  name: string;
  definition_hash: string;
  /** Whether agents are served it now. */
  served?: boolean;
  /** Why not: `hold`, `quarantine`, `block` (null when nothing blocks it). */
  blocked?: string | null;
}

export interface ServerDetail {
  server: ServerSummary;
  subject: string;
  policy_digest: string;
  /** The gateway's log origin: the audience a statement for it must name. */
  audience: string;
  baseline: Surface | null;
  observed: Surface | null;
  drift: Drift[];
  /** While PENDING: the observed surface scanned before approval. */
  first_contact?: FirstContact | null;
  /**
   * Each observed tool's definition hash, as the gateway computes it (what a
   * per-tool decision must sign). Feature-detected: without it the per-tool
   * decisions are not offered (the UI does not re-derive the normalization).
   */
  observed_tools?: ObservedTool[];
  /** Effective-permission probes (issue 16 item 1): the last run, the baseline adopted at approval, what departs. */
  probes?: ProbesView | null;
  /** Behavioural envelopes per tool (issue 16 item 2): what each approved tool was seen to do. */
  envelopes?: EnvelopeView[];
}

/** One probe's run as kept: no result text, only what is compared and shown. */
export interface ProbeRun {
  tool: string;
  arguments_hash: string;
  outcome: 'succeeded' | 'refused' | 'errored' | 'unreachable' | 'unknown_tool';
  result_hash: string | null;
  error_code?: number;
  detail?: string;
  verdict: 'met' | 'exceeded' | 'narrowed' | 'inconclusive';
  failed?: Record<string, string>[];
}

export interface ProbeFinding {
  tool: string;
  arguments_hash: string;
  expected: { kind: 'denied' | 'error' | 'result'; predicates?: Record<string, string>[] };
  observed: { outcome: ProbeRun['outcome']; result_hash: string | null; error_code?: number; detail?: string };
  baseline: ProbeRun['outcome'] | null;
  kind: 'permission_grew' | 'result_departed' | 'beyond_baseline' | 'narrowed' | 'inconclusive';
  action: 'quarantine' | 'report';
  summary: string;
}

export interface ProbesView {
  observed: ProbeRun[];
  observed_at: number;
  baseline: ProbeRun[] | null;
  baseline_at: number | null;
  findings: ProbeFinding[];
}

/** What one approved tool was seen to do (`interlock.envelope/v1`). */
export interface Envelope {
  format: string;
  calls: number;
  errors: number;
  arg_hosts: string[];
  arg_roots: string[];
  result_hosts: string[];
  result_roots: string[];
  data_classes: string[];
  max_result_bytes: number;
  structured: Record<string, string[]>;
}

export interface EnvelopeView {
  tool: string;
  state: 'learning' | 'fixed';
  hash: string;
  /** What a widening decision signs (`envelope:<server>/<tool>` at `hash`). */
  subject: string;
  envelope: Envelope;
}

export interface LogEntry {
  index: number;
  entry: Record<string, unknown> & { type?: string; time?: number };
}

export interface LogPage {
  size: number;
  from: number;
  entries: LogEntry[];
}

export interface Checkpoint {
  size: number;
  root: string;
  note: string | null;
  verifier_key: string;
}

export interface LogProof {
  index: number;
  size: number;
  root: string;
  /** The stored leaf (the entry's signed receipt), standard base64. */
  leaf: string;
  leaf_hash: string;
  proof: string[];
  note: string;
}

export interface Approver {
  key_id: string;
  identity: string;
  label: string;
  added_at: number;
}

/** A standing approval a held call can be approved with (issue 18): the document the reviewer signs. */
export interface ScopeGrant {
  id: string;
  /** `standing:<id>`: what the signed statement names. */
  subject: string;
  document: Record<string, unknown>;
  document_hash: string;
  expires_at: number;
  summary: string;
}

export type ScopeKind = 'once' | 'session' | 'hour' | 'arguments';

export interface ScopeOffer {
  scope: ScopeKind;
  label: string;
  /** Null for `once`: the plan approval alone. */
  grant: ScopeGrant | null;
}

export interface HeldCallScopes {
  plan_id: string;
  plan_hash: string;
  scopes: ScopeOffer[];
}

export interface StandingApproval {
  id: string;
  role: string;
  tool: string;
  document: {
    role?: string;
    tool?: string;
    tool_hash?: string;
    shape?: Record<string, unknown>;
    expires_at?: number;
    /** Narrowed from a held call's review: only this agent, session (hashed), or arguments' digest. */
    agent?: string;
    session?: string;
    arguments_hash?: string;
  } | null;
  expires_at: number;
  approver_key_id: string;
  active: boolean;
  revoked_at: number | null;
}

/** A span of the log in which a server (tool null: all of it) or one tool was not to be served. */
export interface DriftWindow {
  server: string;
  tool: string | null;
  opened_at: number;
  closed_at: number | null;
  closed_by: string | null;
}

export interface ClaimViolation {
  leaf_index: number;
  executed_at: number;
  server: string;
  tool: string | null;
  verdict: string;
  window: DriftWindow;
}

/** `GET /api/v1/claims`: the auditor's question answered from the log alone. */
export interface Claims {
  question: string;
  answer: 'no' | 'yes';
  leaves_read: number;
  executions_checked: number;
  windows: DriftWindow[];
  violations: ClaimViolation[];
}

const enc = encodeURIComponent;

/** One witness configured in `gateway.toml` `[log] witnesses` (issue 43). */
export interface LogWitness {
  name: string;
  /** Its cosignature verifier key (`name+keyid+base64(0x04 ‖ key)`). */
  key: string;
  url: string;
  /** Its newest cosignature, for the browser to verify; null before the first. */
  cosigned: { size: number; received_at: number; checkpoint: string; line: string } | null;
}

/** `GET /api/v1/log/witnesses`. */
export interface LogWitnesses {
  origin: string;
  /** The log's sealed size. */
  size: number;
  witnesses: LogWitness[];
}

/** An alert sink's delivery state (issue 21, `GET /api/v1/alerts`). */
export interface AlertSink {
  name: string;
  kind: string;
  url: string;
  state: 'ok' | 'retrying' | 'dead_letter';
  next_index: number;
  lag: number;
  delivered: number;
  attempts: number;
  dead_letters: number;
  last_error?: string | null;
  last_error_at?: number | null;
  last_delivered_at?: number | null;
  recent_dead_letters: { first_index: number; last_index: number; attempts: number; error: string; at: number }[];
}

export interface AlertTestOutcome {
  sink: string;
  ok: boolean;
  error?: string | null;
  index: number;
}

/** What a redelivery of a sink's dead letters did (`POST /api/v1/alerts/{sink}/redeliver`). */
export interface AlertRedeliverOutcome {
  sink: string;
  redelivered: { first_index: number; last_index: number }[];
  events: number;
  refused?: { first_index: number; last_index: number } | null;
  error?: string | null;
  remaining: number;
  leaf_index?: number | null;
}

export const api = {
  alerts: () => request<{ sinks: AlertSink[] }>('/api/v1/alerts'),
  testAlert: (sink: string) => request<AlertTestOutcome>(`/api/v1/alerts/${enc(sink)}/test`, { method: 'POST' }),
  redeliverAlerts: (sink: string) =>
    request<AlertRedeliverOutcome>(`/api/v1/alerts/${enc(sink)}/redeliver`, { method: 'POST' }),
  inbox: () => request<{ items: InboxItem[] }>('/api/v1/inbox'),
  plans: (status?: string) =>
    request<{ plans: PlanSummary[] }>('/api/v1/plans' + (status ? `?status=${enc(status)}` : '')),
  plan: (id: string) => request<PlanDetail>(`/api/v1/plans/${enc(id)}`),
  servers: () => request<{ servers: ServerSummary[] }>('/api/v1/servers'),
  serverRequests: () => request<{ requests: ServerRequest[] }>('/api/v1/servers/requests'),
  server: (name: string) => request<ServerDetail>(`/api/v1/servers/${enc(name)}`),
  approvers: () => request<{ approvers: Approver[] }>('/api/v1/approvers'),
  log: (from?: number, limit = 100) =>
    request<LogPage>(`/api/v1/log?limit=${limit}` + (from !== undefined ? `&from=${from}` : '')),
  checkpoint: () => request<Checkpoint>('/api/v1/log/checkpoint'),
  logProof: (index: number) => request<LogProof>(`/api/v1/log/${index}/proof`),
  logWitnesses: () => request<LogWitnesses>('/api/v1/log/witnesses'),
  standing: () => request<{ standing: StandingApproval[] }>('/api/v1/standing'),
  revokeStanding: (id: string, reason?: string) =>
    request<{ id: string; revoked: boolean }>(`/api/v1/standing/${enc(id)}/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(reason ? { reason } : {}),
    }),
  /** What a held call may be approved for: once, this session, an hour, these exact arguments. */
  scopes: (planId: string) => request<HeldCallScopes>(`/api/v1/plans/${enc(planId)}/scopes`),
  grantStanding: (document: Record<string, unknown>, envelope: unknown) =>
    request<{ id: string; role: string; tool: string; expires_at: number }>('/api/v1/standing', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ document, envelope }),
    }),
  claims: () => request<Claims>('/api/v1/claims'),
  receipts: (f: ReceiptFilters, cursor?: number, limit = 100) =>
    request<ReceiptsPage>(`/api/v1/receipts?${receiptQuery(f)}&limit=${limit}` + (cursor !== undefined ? `&cursor=${cursor}` : '')),
  exportReceipts: (f: ReceiptFilters) =>
    request<ReceiptsExport>('/api/v1/receipts/export', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(Object.fromEntries(Object.entries(f).filter(([, v]) => v))),
    }),
  overview: (since: number, bucket: number, today: number) =>
    request<Overview>(`/api/v1/overview?since=${since}&bucket=${bucket}&today=${today}`),
  /** One receipt as a C2SP tlog-proof file (text). */
  tlogProof: (index: number) => requestText(`/api/v1/log/${index}/tlog-proof`),
  /** Proposes a HALTED plan's rollback plan (held for review; nothing runs). */
  proposeRollback: (id: string) =>
    request<{ plan: PlanSummary }>(`/api/v1/plans/${enc(id)}/rollback`, { method: 'POST' }),
  decide: (kind: SubjectKind, subject: string, env: DsseEnvelope) =>
    request<Record<string, unknown>>(`${decisionPath(kind, subject)}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(env),
    }),
};

/**
 * Where a decision about a subject is posted. A tool's subject is
 * `<server>/<tool>` (server names never hold `/`, so the first one splits).
 */
export function decisionPath(kind: SubjectKind, subject: string): string {
  if (kind === 'plan') return `/api/v1/plans/${enc(subject)}/decisions`;
  if (kind === 'server') return `/api/v1/servers/${enc(subject)}/decisions`;
  const { server, tool } = splitToolSubject(subject);
  return `/api/v1/servers/${enc(server)}/tools/${enc(tool)}/decisions`;
}

/** The receipts view's filters (issue 18): times as Unix seconds (strings), the rest exact names. */
export interface ReceiptFilters {
  from?: string;
  to?: string;
  plan?: string;
  server?: string;
  agent?: string;
  tool?: string;
  event?: string;
}

export function receiptQuery(f: ReceiptFilters): string {
  return Object.entries(f)
    .filter(([, v]) => v)
    .map(([k, v]) => `${k}=${enc(String(v))}`)
    .join('&');
}

/** One receipt, decoded by the gateway from its statement. */
export interface Receipt {
  index: number;
  kind: string;
  time: number;
  plan_id?: string | null;
  server?: string | null;
  agent?: string | null;
  tool?: string | null;
  verdict?: string | null;
  outcome?: string | null;
  shadow?: boolean | null;
  approver?: string | null;
  hash?: { name: string; value: string } | null;
  findings?: unknown[] | null;
  reasons?: string | null;
  predicate: Record<string, unknown> | null;
}

export interface ReceiptsPage {
  receipts: Receipt[];
  next_cursor: number | null;
}

export interface ReceiptsExport {
  receipts: number;
  /** Approver key registrations among them (always exported: they back the signatures). */
  registrations: number;
  log_key: string;
  verified: boolean;
  problems: string[];
  files: { name: string; media_type: string; content: string }[];
}

/** A GET whose answer is text (a file to download), with the API's errors. */
export async function requestText(path: string): Promise<string> {
  const t = token();
  if (!t) throw new ApiError(401, 'no_key', 'No reviewer API key yet: add one in Settings.');
  const r = await fetch(apiBase() + path, { headers: { Authorization: `Bearer ${t}` } }).catch((e: Error) => {
    throw new ApiError(0, 'network', `The gateway is unreachable (${e.message}).`);
  });
  const text = await r.text();
  if (!r.ok) {
    let message = text.trim() || `HTTP ${r.status}`;
    let code = 'http';
    try {
      const err = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
      message = err?.message ?? message;
      code = err?.code ?? code;
    } catch {
      /* plain text */
    }
    throw new ApiError(r.status, code, message);
  }
  return text;
}

/** One server's or agent's tool calls (or all of them) in the overview. */
export interface OverviewSeries {
  name: string;
  calls: number;
  holds: number;
  blocks: number;
  shadow_calls: number;
  shadow_would_block: number;
  shadow_would_block_rate: number | null;
  series: { calls: number[]; holds: number[]; blocks: number[] };
}

/** `GET /api/v1/overview`. */
export interface Overview {
  now: number;
  since: number;
  bucket: number;
  buckets: number[];
  held: number;
  quarantined: number;
  decided_today: number;
  calls_today: number;
  held_calls_today: number;
  all: OverviewSeries;
  servers: OverviewSeries[];
  agents: OverviewSeries[];
}
