// The log's witnesses (issue 43): each witness configured in gateway.toml
// `[log] witnesses`, with its newest cosignature verified in this browser
// against the witness's configured key (and the cosigned checkpoint against the
// log key): the size it cosigned, when, and how far behind the log it is.
// The gateway's answer is not trusted beyond the keys.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type LogWitness } from '../lib/api';
import { checkCosigned, type CosignedCheck } from '../lib/cosignature';
import { fullTime, useLive, useResource } from '../lib/hooks';
import { ErrorBanner } from './ui';

/** What a witness's row says, by the check of its newest cosignature. */
type RowState = { kind: 'pending' } | { kind: 'none' } | { kind: 'checked'; check: CosignedCheck };

const keyOf = (w: LogWitness, logKey: string) => `${w.key}\n${logKey}\n${w.cosigned?.checkpoint ?? ''}\n${w.cosigned?.line ?? ''}`;

/** Rows drawn while the list loads (the last count seen, so the card keeps its height). */
let lastCount = 1;

export function WitnessesPanel({ logKey, logSize }: { logKey?: string; logSize?: number }) {
  const res = useResource(() => api.logWitnesses(), []);
  useLive(() => true, res.reload);
  const seen = useRef(logSize);
  useEffect(() => {
    if (logSize !== undefined && seen.current !== undefined && logSize !== seen.current) res.reload();
    seen.current = logSize;
  }, [logSize]);
  // Checks kept by what they checked: a reload with the same cosignature keeps its verdict on screen.
  const [checks, setChecks] = useState<Map<string, CosignedCheck>>(new Map());
  const data = res.data;
  useEffect(() => {
    if (!data || !logKey) return;
    let live = true;
    const wanted = new Set(data.witnesses.map((w) => keyOf(w, logKey)));
    // Only the cosignatures on screen are kept.
    const keep = (m: Map<string, CosignedCheck>, k: string, c: CosignedCheck) =>
      new Map([...m].filter(([x]) => wanted.has(x))).set(k, c);
    for (const w of data.witnesses) {
      const k = keyOf(w, logKey);
      if (!w.cosigned || checks.has(k)) continue;
      void checkCosigned(w.cosigned.checkpoint, w.cosigned.line, w.key, logKey, data.origin).then(
        (c) => live && setChecks((m) => keep(m, k, c)),
        (e: Error) => live && setChecks((m) => keep(m, k, { ok: false, message: e.message })),
      );
    }
    return () => {
      live = false;
    };
  }, [data, logKey]);
  if (data) lastCount = Math.max(1, data.witnesses.length);
  const state = (w: LogWitness): RowState => {
    if (!w.cosigned) return { kind: 'none' };
    const c = logKey ? checks.get(keyOf(w, logKey)) : undefined;
    return c ? { kind: 'checked', check: c } : { kind: 'pending' };
  };
  const rows = data?.witnesses.map((w) => ({ w, s: state(w) })) ?? [];
  const verified = rows.filter((r) => r.s.kind === 'checked' && r.s.check.ok).length;
  const failed = rows.filter((r) => r.s.kind === 'checked' && !r.s.check.ok).length;
  return (
    <div class="card witnesses" data-testid="witnesses" data-count={data ? String(data.witnesses.length) : ''}>
      <div class="card-head">
        <h3>Cosignatures</h3>
        <span class="right muted" style={{ fontSize: '12.5px' }} data-testid="witnesses-summary">
          {!data
            ? 'C2SP tlog-cosignature'
            : data.witnesses.length === 0
              ? 'none configured'
              : rows.some((r) => r.s.kind === 'pending')
                ? 'checking in this browser…'
                : `${verified} of ${data.witnesses.length} verified in this browser${failed ? `, ${failed} failed` : ''}`}
        </span>
      </div>
      {res.error && !data ? (
        <div class="card-body">
          <ErrorBanner error={res.error} onRetry={res.reload} />
        </div>
      ) : !data ? (
        <div class="witness-list skeleton" aria-busy="true" aria-label="Loading">
          {Array.from({ length: lastCount }, (_, i) => (
            <div class="witness-row" key={i}>
              <span class="w-mark" />
              <span class="sk" style={{ width: '140px' }} />
              <span class="sk" style={{ width: `${40 + ((i * 13) % 25)}%` }} />
            </div>
          ))}
        </div>
      ) : data.witnesses.length === 0 ? (
        <div class="card-body witness-none muted" data-testid="witnesses-none">
          No witness cosigns this log. To add one, run <code>interlock witness serve --name NAME --log LOG-KEY</code> and list it in{' '}
          <code>gateway.toml</code> under <code>[log] witnesses</code> (<code>{'{ url = "…", key = "…" }'}</code>).
        </div>
      ) : (
        <div class="witness-list" role="list">
          {rows.map(({ w, s }) => {
            const ok = s.kind === 'checked' && s.check.ok;
            const behind = ok && s.kind === 'checked' ? Math.max(0, data.size - (s.check.size ?? 0)) : null;
            const st = s.kind === 'checked' ? (s.check.ok ? 'ok' : 'bad') : s.kind;
            return (
              <div
                class={`witness-row is-${st}`}
                role="listitem"
                data-testid="witness-row"
                data-name={w.name}
                data-state={st}
                title={`${w.key}\n${w.url}${w.cosigned ? `\nreceived ${fullTime(w.cosigned.received_at)}` : ''}`}
              >
                <span class="w-mark" aria-hidden="true">
                  {st === 'ok' ? '✓' : st === 'bad' ? '✗' : st === 'pending' ? '…' : '–'}
                </span>
                <span class="w-name mono ellipsis">{w.name}</span>
                <span class="w-what" data-testid="witness-what">
                  {s.kind === 'none' ? (
                    <span class="muted">no cosignature yet</span>
                  ) : s.kind === 'pending' ? (
                    <span class="muted">checking its cosignature…</span>
                  ) : s.check.ok ? (
                    <>
                      cosigned size <b>{s.check.size}</b> at {fullTime(s.check.timestamp)}
                    </>
                  ) : (
                    <span>Not verified: {s.check.message}</span>
                  )}
                </span>
                <span class="w-behind" data-testid="witness-behind">
                  {behind === null ? '' : behind === 0 ? 'up to date' : `${behind} ${behind === 1 ? 'entry' : 'entries'} behind`}
                </span>
              </div>
            );
          })}
        </div>
      )}
    </div>
  );
}
