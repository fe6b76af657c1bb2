// The server review's behaviour panel (issue 16 items 1 and 2): what its
// effective-permission probes came to against the baseline adopted at
// approval, and what each approved tool was seen to do (its envelope).
// Read-only: a grown probe quarantines the server, and a reviewer re-approves
// it from the header; an envelope is widened from the CLI or the API.

import type { ServerDetail } from '../lib/api';
import { bytesLabel, envelopeFacts, errorRate, probeRows, type ProbeStanding } from '../lib/behaviour';
import { Hash, plural, Time } from '../components/ui';

const STANDING_LABEL: Record<ProbeStanding, string> = {
  ok: 'as expected',
  grew: 'permission grew',
  narrowed: 'narrowed',
  unknown: 'inconclusive',
};

const STANDING_CLASS: Record<ProbeStanding, string> = {
  ok: 'chip',
  grew: 'chip act-quarantine',
  narrowed: 'chip act-hold',
  unknown: 'chip act-hold',
};

function Probes({ d }: { d: ServerDetail }) {
  const rows = probeRows(d.probes);
  if (!d.probes || rows.length === 0) return null;
  const grew = rows.filter((r) => r.standing === 'grew').length;
  return (
    <>
      <div class="section-title">
        Probes
        <span class="faint" style={{ textTransform: 'none', letterSpacing: 0, fontWeight: 500 }}>
          last run <Time unix={d.probes.observed_at} />
          {d.probes.baseline_at ? (
            <>
              {' '}
              · baseline from <Time unix={d.probes.baseline_at} />
            </>
          ) : (
            ' · no baseline yet (adopted at approval)'
          )}
        </span>
      </div>
      <div class={`card probes${grew ? ' act-block' : ''}`} data-testid="probes">
        <table class="kv-table">
          <thead>
            <tr>
              <th>Tool</th>
              <th>Arguments</th>
              <th>At approval</th>
              <th>Now</th>
              <th>Standing</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr data-testid="probe-row" data-standing={r.standing}>
                <td class="mono">{r.tool}</td>
                <td>
                  <Hash value={r.argumentsHash} />
                </td>
                <td class="mono">{r.baseline ?? '—'}</td>
                <td class="mono">{r.outcome}</td>
                <td>
                  <span class={STANDING_CLASS[r.standing]} title={r.finding?.summary ?? ''}>
                    {STANDING_LABEL[r.standing]}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {grew > 0 && (
          <p class="muted" data-testid="probes-grew">
            {plural(grew, 'probe')} now succeed{grew === 1 ? 's' : ''} where {grew === 1 ? 'it was' : 'they were'} expected to
            be refused: the server was quarantined on this evidence (a <code>server.probe_drift</code> leaf).
          </p>
        )}
      </div>
    </>
  );
}

function Envelopes({ d }: { d: ServerDetail }) {
  const envelopes = d.envelopes ?? [];
  if (envelopes.length === 0) return null;
  return (
    <>
      <div class="section-title">
        What its tools were seen to do
        <span class="faint" style={{ textTransform: 'none', letterSpacing: 0, fontWeight: 500 }}>
          {plural(envelopes.length, 'envelope')}: a call reaching beyond a fixed one is held
        </span>
      </div>
      <div class="envelopes" data-testid="envelopes">
        {envelopes.map((v) => (
          <div class="card envelope" data-testid="envelope" data-envelope-tool={v.tool} data-state={v.state}>
            <div class="card-head">
              <b class="mono">{v.tool}</b>
              <span class={v.state === 'fixed' ? 'chip' : 'chip act-hold'}>
                {v.state === 'fixed' ? 'fixed' : 'learning'}
              </span>
              <span class="faint ellipsis">
                {plural(v.envelope.calls, 'call')} · {errorRate(v.envelope)}% errors · results up to{' '}
                {bytesLabel(v.envelope.max_result_bytes)}
              </span>
            </div>
            <dl class="envelope-facts">
              <div>
                <dt>Envelope hash</dt>
                <dd>
                  <Hash value={v.hash} />
                </dd>
              </div>
              {envelopeFacts(v.envelope).map((f) => (
                <div>
                  <dt>{f.label}</dt>
                  <dd>
                    {f.values.length ? (
                      <span class="row-gap">
                        {f.values.map((x) => (
                          <span class="chip">{x}</span>
                        ))}
                      </span>
                    ) : (
                      <span class="faint">none seen</span>
                    )}
                  </dd>
                </div>
              ))}
            </dl>
          </div>
        ))}
      </div>
    </>
  );
}

/** Probes, then envelopes; nothing when the server has neither. */
export function BehaviourPanel({ d }: { d: ServerDetail }) {
  return (
    <>
      <Probes d={d} />
      <Envelopes d={d} />
    </>
  );
}
