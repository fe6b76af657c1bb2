import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ago, fullTime } from '../lib/hooks';
import { tickParts } from '../lib/text';

const RISKS = ['low', 'medium', 'high', 'critical'];

export function RiskBadge({ risk, label }: { risk?: string | null; label?: string }) {
  const r = risk && (RISKS.includes(risk) || risk === 'info') ? risk : 'none';
  return (
    <span class={`badge risk-${r}`} data-risk={r} title={label ? `${label}: ${risk ?? 'none'}` : undefined}>
      <span class="pip" />
      {risk ?? 'none'}
    </span>
  );
}

export function Status({ status }: { status: string }) {
  return (
    <span class={`status s-${status}`} data-status={status}>
      {status}
    </span>
  );
}

export function Time({ unix }: { unix?: number | null }) {
  return <time title={fullTime(unix)}>{ago(unix)}</time>;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="copy"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(
          () => {
            setDone(true);
            setTimeout(() => setDone(false), 1200);
          },
          () => undefined,
        );
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

export function Hash({ value, copy = true }: { value?: string | null; copy?: boolean }) {
  if (!value) return <span class="none">none</span>;
  return (
    <span class="hash">
      <code>{value}</code>
      {copy && <CopyButton text={value} />}
    </span>
  );
}

export function SkeletonRows({ n = 5, cols = 3 }: { n?: number; cols?: number }) {
  return (
    <div class="skeleton" aria-busy="true" aria-label="Loading">
      {Array.from({ length: n }, (_, i) => (
        <div class="row" key={i}>
          <div class="kind" />
          <div class="main-col">
            <div class="sk" style={{ width: `${38 + ((i * 17) % 30)}%`, marginBottom: '8px' }} />
            <div class="sk" style={{ width: `${22 + ((i * 11) % 20)}%`, height: '10px' }} />
          </div>
          {Array.from({ length: cols }, (_, j) => (
            <div class="col" key={j} style={{ width: '84px' }}>
              <div class="sk" style={{ width: '70px' }} />
            </div>
          ))}
        </div>
      ))}
    </div>
  );
}

export function SkeletonBlock({ lines = 4 }: { lines?: number }) {
  return (
    <div class="skeleton card-body" aria-busy="true">
      {Array.from({ length: lines }, (_, i) => (
        <div class="sk" key={i} style={{ width: `${90 - ((i * 23) % 45)}%`, marginBottom: '12px' }} />
      ))}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <div>
        <div class="big">{title}</div>
        {children}
      </div>
    </div>
  );
}

export function ErrorBanner({ error, onRetry }: { error: Error; onRetry?: () => void }) {
  const noKey = (error as { code?: string }).code === 'no_key' || (error as { status?: number }).status === 401;
  return (
    <div class="banner bad" role="alert">
      <Icon name="alert" />
      <div class="spacer">
        <b>{noKey ? 'The reviewer API needs a key' : 'Could not load'}</b>
        <span>
          <Ticked text={error.message} />
        </span>
      </div>
      {noKey ? (
        <a class="btn small" href="#/settings">
          Open Settings
        </a>
      ) : (
        onRetry && (
          <button class="btn small" onClick={onRetry}>
            Retry
          </button>
        )
      )}
    </div>
  );
}

/** A gateway text with its `code` spans shown as code (never as HTML), without the backticks. */
export function Ticked({ text }: { text: string }) {
  return <>{tickParts(text).map((p, i) => (p.code ? <code key={i}>{p.text}</code> : p.text))}</>;
}

export function Kbd({ k }: { k: string }) {
  return <kbd>{k}</kbd>;
}

/** Pretty JSON with keys sorted, for display. */
export function pretty(v: unknown): string {
  return JSON.stringify(sortKeys(v), null, 2);
}

export function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, sortKeys(o[k])]),
    );
  }
  return v;
}

const ICONS: Record<string, string> = {
  alert: 'M12 3 2 21h20L12 3Zm0 6v6m0 3v.01',
  info: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20Zm0 9v6m0-10v.01',
  stop: 'M8 2h8l6 6v8l-6 6H8l-6-6V8l6-6Zm-1 10h10',
  x: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20ZM8 8l8 8m0-8-8 8',
  new: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20Zm0 5v10m-5-5h10',
  check: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20Zm-4 10 3 3 5-6',
};

/** A small stroked icon (inline SVG: no fonts or emoji needed). */
export function Icon({ name, size = 18 }: { name: keyof typeof ICONS | string; size?: number }) {
  return (
    <svg
      class="icon"
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
    >
      <path d={ICONS[name] ?? ICONS.info} />
    </svg>
  );
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A row's outcome after an action: what went through (a note) or why not (an alert). */
export function RowOutcome({ note, error, testid }: { note: string | null; error: string | null; testid: string }) {
  return (
    <>
      {note && (
        <div class="verify ok" data-testid={`${testid}-note`} style={{ margin: '8px 16px' }}>
          {note}
        </div>
      )}
      {error && (
        <div class="error-box" role="alert" data-testid={`${testid}-error`} style={{ margin: '8px 16px' }}>
          <Ticked text={error} />
        </div>
      )}
    </>
  );
}
