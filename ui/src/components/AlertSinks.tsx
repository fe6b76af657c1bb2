import { useEffect, useState } from 'preact/hooks';
import { api, type AlertRedeliverOutcome, type AlertSink, type AlertTestOutcome } from '../lib/api';
import { useResource } from '../lib/hooks';
import { SkeletonBlock, Time } from './ui';

/** A sink's state as a badge: ok (green), retrying (amber), dead letters (red). */
function State({ s }: { s: AlertSink }) {
  const risk = s.state === 'ok' ? 'low' : s.state === 'retrying' ? 'medium' : 'high';
  const label = s.state === 'dead_letter' ? 'dead letter' : s.state;
  return (
    <span class={`badge risk-${risk}`} data-testid="alert-state">
      <span class="pip" />
      {label}
    </span>
  );
}

/** What a redelivery did, in words. */
function redeliveredText(r: AlertRedeliverOutcome): string {
  const sent = r.redelivered.length;
  const head =
    sent === 0 && !r.refused
      ? 'No dead letters to redeliver.'
      : `Redelivered ${r.events} event${r.events === 1 ? '' : 's'} from ${sent} dead letter${sent === 1 ? '' : 's'}.`;
  return r.refused ? `${head} Refused: leaves ${r.refused.first_index}–${r.refused.last_index}: ${r.error ?? ''}` : head;
}

function SinkRow({ s, reload }: { s: AlertSink; reload: () => void }) {
  const [redelivering, setRedelivering] = useState(false);
  const [redelivery, setRedelivery] = useState<{ ok: boolean; text: string } | null>(null);
  const redeliver = async () => {
    setRedelivering(true);
    setRedelivery(null);
    try {
      const r = await api.redeliverAlerts(s.name);
      setRedelivery({ ok: !r.refused, text: redeliveredText(r) });
      reload();
    } catch (e) {
      setRedelivery({ ok: false, text: `Redelivery failed: ${(e as Error).message}` });
    } finally {
      setRedelivering(false);
    }
  };
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<AlertTestOutcome | { ok: false; error: string } | null>(null);
  const send = async () => {
    setBusy(true);
    setResult(null);
    try {
      setResult(await api.testAlert(s.name));
    } catch (e) {
      setResult({ ok: false, error: (e as Error).message });
    } finally {
      setBusy(false);
    }
  };
  const error = s.last_error ? (
    <>
      <span class={s.state === 'ok' ? 'muted' : ''}>{s.last_error}</span>
      <span class="faint">
        {' '}
        · <Time unix={s.last_error_at} />
        {s.attempts > 0 && <> · attempt {s.attempts}</>}
      </span>
    </>
  ) : (
    <span class="faint">none</span>
  );
  return (
    <>
      <tr class="alert-main" data-testid="alert-sink" data-sink={s.name} data-state={s.state}>
        <td>
          <code>{s.name}</code> <span class="faint">{s.kind}</span>
        </td>
        <td>
          <State s={s} />
        </td>
        <td class="num" data-testid="alert-lag" title="Signed log entries not yet delivered">
          {s.lag}
        </td>
        <td class="num" data-testid="alert-delivered">
          {s.delivered}
        </td>
        <td class="num" data-testid="alert-dead" title="Requests given up on after their retries">
          {s.dead_letters}
        </td>
        <td class="alert-actions">
          <button class="btn small" data-testid="alert-test" disabled={busy} onClick={() => void send()}>
            {busy ? 'Sending…' : 'Send test'}
          </button>
          <button
            class="btn small"
            data-testid="alert-redeliver"
            disabled={redelivering || s.dead_letters === 0}
            title={
              s.dead_letters === 0
                ? 'No dead letters: nothing to redeliver'
                : 'Send the dead-lettered events again, oldest first (recorded in the log)'
            }
            onClick={() => void redeliver()}
          >
            {redelivering ? 'Redelivering…' : 'Redeliver'}
          </button>
        </td>
      </tr>
      <tr class="alert-detail" data-sink={s.name}>
        <td colSpan={6}>
          <div>
            <span class="faint">Last error:</span> <span data-testid="alert-error">{error}</span>
          </div>
          <div
            data-testid="alert-test-result"
            data-sink={s.name}
            class={result ? (result.ok ? 'ok-text' : 'bad-text') : ''}
          >
            {result ? (result.ok ? 'Test event accepted by the receiver.' : `Test event not accepted: ${result.error ?? ''}`) : ''}
          </div>
          {redelivery && (
            <div data-testid="alert-redeliver-result" data-sink={s.name} class={redelivery.ok ? 'ok-text' : 'bad-text'}>
              {redelivery.text}
            </div>
          )}
        </td>
      </tr>
    </>
  );
}

/**
 * Settings → Alerts (issue 21): each sink's delivery from the log — lag, last
 * error, dead letters — a *Send test* button, and *Redeliver* for a sink's
 * dead letters. Refreshed every 5 seconds.
 */
export function AlertSinks() {
  const list = useResource(() => api.alerts(), []);
  useEffect(() => {
    const t = setInterval(() => list.reload(), 5000);
    return () => clearInterval(t);
  }, []);
  const sinks = list.data?.sinks ?? [];
  return (
    <div class="card alert-sinks" data-testid="alert-sinks">
      <div class="card-head">
        <h3>Alerts</h3>
        <span class="faint" style={{ marginLeft: 'auto' }}>
          decisions delivered from the log to your SIEM, chat and pager
        </span>
      </div>
      {list.error ? (
        <div class="error-box" role="alert" style={{ margin: '12px 16px' }}>
          {list.error.message}
        </div>
      ) : !list.data ? (
        <SkeletonBlock lines={3} />
      ) : sinks.length === 0 ? (
        <p class="muted" style={{ margin: '12px 16px' }} data-testid="alert-none">
          No alert sinks are configured. Add <code>[[alerts.sinks]]</code> to <code>gateway.toml</code> (docs/ALERTS.md).
        </p>
      ) : (
        <table class="table alert-sinks-table">
          <thead>
            <tr>
              <th>Sink</th>
              <th>State</th>
              <th class="num">Lag</th>
              <th class="num">Delivered</th>
              <th class="num">Dead letters</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {sinks.map((s) => (
              <SinkRow key={s.name} s={s} reload={() => list.reload()} />
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
