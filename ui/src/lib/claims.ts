// The auditor's claim (`GET /api/v1/claims`, issue 16 item 9): checked on the
// way in (a malformed answer is an error, never a "no"), put in words, and laid
// out as a timeline of drift windows over log indexes.

import type { ClaimViolation, Claims, DriftWindow } from './api';

export class ClaimsError extends Error {}

const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isStrOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';

function checkWindow(w: unknown, where: string): DriftWindow {
  const o = w as Record<string, unknown> | null;
  if (!o || typeof o !== 'object') throw new ClaimsError(`${where} is not an object`);
  if (typeof o.server !== 'string') throw new ClaimsError(`${where}.server is not a string`);
  if (!isStrOrNull(o.tool ?? null)) throw new ClaimsError(`${where}.tool is not a string or null`);
  if (!isIndex(o.opened_at)) throw new ClaimsError(`${where}.opened_at is not a log index`);
  const closed = o.closed_at ?? null;
  if (closed !== null && (!isIndex(closed) || closed < o.opened_at))
    throw new ClaimsError(`${where}.closed_at is not a log index after opened_at`);
  if (!isStrOrNull(o.closed_by ?? null)) throw new ClaimsError(`${where}.closed_by is not a string or null`);
  return {
    server: o.server,
    tool: (o.tool as string | null | undefined) ?? null,
    opened_at: o.opened_at,
    closed_at: closed as number | null,
    closed_by: (o.closed_by as string | null | undefined) ?? null,
  };
}

/** The API's answer, checked: an answer that contradicts its own violations is refused. */
export function parseClaims(raw: unknown): Claims {
  const o = raw as Record<string, unknown> | null;
  if (!o || typeof o !== 'object') throw new ClaimsError('the claims answer is not an object');
  if (o.answer !== 'no' && o.answer !== 'yes') throw new ClaimsError(`answer is ${JSON.stringify(o.answer)}, not "no" or "yes"`);
  if (!Array.isArray(o.windows)) throw new ClaimsError('windows is not a list');
  if (!Array.isArray(o.violations)) throw new ClaimsError('violations is not a list');
  const windows = o.windows.map((w, i) => checkWindow(w, `windows[${i}]`));
  const violations: ClaimViolation[] = o.violations.map((v, i) => {
    const x = v as Record<string, unknown> | null;
    const where = `violations[${i}]`;
    if (!x || typeof x !== 'object') throw new ClaimsError(`${where} is not an object`);
    if (!isIndex(x.leaf_index) || !isIndex(x.executed_at)) throw new ClaimsError(`${where} has no log indexes`);
    if (typeof x.server !== 'string') throw new ClaimsError(`${where}.server is not a string`);
    return {
      leaf_index: x.leaf_index,
      executed_at: x.executed_at,
      server: x.server,
      tool: typeof x.tool === 'string' ? x.tool : null,
      verdict: typeof x.verdict === 'string' ? x.verdict : '?',
      window: checkWindow(x.window, `${where}.window`),
    };
  });
  if ((o.answer === 'no') !== (violations.length === 0))
    throw new ClaimsError(`the answer is "${o.answer}" but ${violations.length} violation(s) are listed`);
  const count = (k: string) => (isIndex(o[k]) ? (o[k] as number) : 0);
  return {
    question: typeof o.question === 'string' ? o.question : '',
    answer: o.answer,
    leaves_read: count('leaves_read'),
    executions_checked: count('executions_checked'),
    windows,
    violations,
  };
}

const n = (k: number, one: string, many = `${one}s`) => `${k} ${k === 1 ? one : many}`;

/** The answer in one sentence, with what it was computed from. */
export function claimSentence(c: Claims): string {
  const checked = `${n(c.executions_checked, 'execution')} checked against ${n(c.windows.length, 'drift window')}`;
  return c.answer === 'no'
    ? `No tool ran between a drift and the reviewer’s decision — ${checked}.`
    : `Yes: ${n(c.violations.length, 'execution')} ran between a drift and the reviewer’s decision — ${checked}.`;
}

/** What a window covers: a tool, or the whole server (quarantined). */
export function windowLabel(w: { server: string; tool: string | null }): string {
  return w.tool === null ? `${w.server} (whole server)` : `${w.server}/${w.tool}`;
}

export interface TimelineBar {
  label: string;
  window: DriftWindow;
  /** Left edge and width, in percent of the log read. */
  left: number;
  width: number;
  /** Still open at the end of the log read. */
  open: boolean;
  /** Violations inside this window, with their position in percent. */
  violations: { at: number; v: ClaimViolation }[];
}

/**
 * One bar per drift window over the log's indexes `[0, size)`: opened→closed
 * (an open window runs to the end), at least `minWidth` percent wide so a
 * window closed by the next leaf stays visible. Violations are placed at their
 * execution's index on the bar of the window they fell in.
 */
export function timeline(c: Claims, minWidth = 0.8): { size: number; bars: TimelineBar[] } {
  const last = Math.max(
    0,
    ...c.windows.map((w) => Math.max(w.opened_at, w.closed_at ?? 0)),
    ...c.violations.map((v) => Math.max(v.executed_at, v.leaf_index)),
  );
  const size = Math.max(c.leaves_read, last + 1, 1);
  const pct = (i: number) => (i / size) * 100;
  const same = (a: DriftWindow, b: DriftWindow) =>
    a.server === b.server && a.tool === b.tool && a.opened_at === b.opened_at && a.closed_at === b.closed_at;
  const bars = [...c.windows]
    .sort((a, b) => a.opened_at - b.opened_at || windowLabel(a).localeCompare(windowLabel(b)))
    .map((w) => {
      const left = pct(w.opened_at);
      const end = w.closed_at === null ? 100 : pct(w.closed_at);
      const width = Math.min(100 - left, Math.max(minWidth, end - left));
      return {
        label: windowLabel(w),
        window: w,
        left,
        width,
        open: w.closed_at === null,
        violations: c.violations.filter((v) => same(v.window, w)).map((v) => ({ at: pct(v.executed_at), v })),
      };
    });
  return { size, bars };
}
