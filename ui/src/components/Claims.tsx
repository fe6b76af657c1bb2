// The auditor's claim (issue 16 item 9), answered by the gateway from the log
// alone: the answer first, then the drift windows as bars over log indexes
// (opened → closed), any execution inside one marked in red.
import { useEffect, useMemo, useRef } from 'preact/hooks';
import { api } from '../lib/api';
import { claimSentence, parseClaims, timeline, windowLabel } from '../lib/claims';
import { useLive, useResource } from '../lib/hooks';
import { ErrorBanner, SkeletonBlock } from './ui';

/** How many windows are drawn before the rest fold away (the card keeps its height). */
const SHOWN = 8;

/** `logSize`: the log's size as the page knows it; when it grows, the claim is asked again. */
export function ClaimsPanel({ logSize }: { logSize?: number }) {
  const res = useResource(() => api.claims().then(parseClaims), []);
  useLive(() => true, res.reload);
  const seen = useRef(logSize);
  useEffect(() => {
    if (logSize !== undefined && seen.current !== undefined && logSize !== seen.current) res.reload();
    seen.current = logSize;
  }, [logSize]);
  const c = res.data;
  const tl = useMemo(() => (c ? timeline(c) : null), [c]);
  return (
    <div class="card claims" data-testid="claims" data-answer={c?.answer ?? ''}>
      <div class="card-head">
        <h3>Drift windows</h3>
        <span class="right muted" style={{ fontSize: '12.5px' }}>
          {c ? `from ${c.leaves_read} log leaves alone` : ' '}
        </span>
      </div>
      {res.error && !c ? (
        <div class="card-body">
          <ErrorBanner error={res.error} onRetry={res.reload} />
        </div>
      ) : !c || !tl ? (
        <SkeletonBlock lines={3} />
      ) : (
        <div class="card-body">
          <div class="claims-q muted">Was any tool executed after its drift was detected and before a reviewer decided?</div>
          <div class={`claims-answer ${c.answer === 'no' ? 'ok' : 'bad'}`} data-testid="claims-answer">
            <b class="word">{c.answer === 'no' ? 'No' : 'Yes'}</b>
            <span data-testid="claims-sentence">{claimSentence(c)}</span>
          </div>
          {tl.bars.length === 0 ? (
            <div class="none" style={{ marginTop: '10px' }}>
              No drift window yet: no server or tool was ever held, quarantined or blocked.
            </div>
          ) : (
            <div class="timeline" data-testid="claims-timeline" role="list" aria-label="Drift windows by log index">
              {tl.bars.slice(0, SHOWN).map((b) => (
                <div class="tl-row" role="listitem" data-testid="claims-window" data-open={String(b.open)}>
                  <span class="tl-label mono ellipsis" title={b.label}>
                    {b.label}
                  </span>
                  <span class="tl-track">
                    <span
                      class={`tl-bar${b.open ? ' open' : ''}${b.violations.length ? ' bad' : ''}`}
                      style={{ left: `${b.left}%`, width: `${b.width}%` }}
                      title={`${windowLabel(b.window)}: opened at #${b.window.opened_at}, ${
                        b.open ? 'still open' : `closed at #${b.window.closed_at} by ${b.window.closed_by ?? '?'}`
                      }`}
                    />
                    {b.violations.map((v) => (
                      <span
                        class="tl-violation"
                        data-testid="claims-violation"
                        style={{ left: `${v.at}%` }}
                        title={`#${v.v.leaf_index}: ${v.v.server}/${v.v.tool ?? '?'} ran (${v.v.verdict}) inside this window`}
                      />
                    ))}
                  </span>
                  <span class="tl-range mono">
                    #{b.window.opened_at} → {b.open ? 'open' : `#${b.window.closed_at}`}
                    <span class="faint"> {b.open ? 'awaiting a decision' : (b.window.closed_by ?? '')}</span>
                  </span>
                </div>
              ))}
              {tl.bars.length > SHOWN && (
                <div class="faint" style={{ fontSize: '12px' }}>
                  and {tl.bars.length - SHOWN} more (<code>interlock receipts claims</code> lists them all)
                </div>
              )}
              <div class="tl-row tl-axis" aria-hidden="true">
                <span />
                <span class="tl-track mono">
                  <span>#0</span>
                  <span>#{tl.size - 1}</span>
                </span>
                <span />
              </div>
            </div>
          )}
          {c.violations.length > 0 && (
            <ul class="inline-list claims-violations" data-testid="claims-violations">
              {c.violations.map((v) => (
                <li>
                  <b class="mono">#{v.leaf_index}</b>
                  <span>
                    {v.server}/{v.tool ?? '?'} ran ({v.verdict}) inside {windowLabel(v.window)}’s window #{v.window.opened_at} →{' '}
                    {v.window.closed_at === null ? 'open' : `#${v.window.closed_at}`}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
