import { useEffect, useState } from 'preact/hooks';
import { Ticked } from './ui';

export interface Toast {
  id: number;
  text: string;
  kind: 'info' | 'ok' | 'bad';
  href?: string;
  /** What happened, in words ("Server quarantined"), shown before the text. */
  label?: string;
}

/** At most this many show at once (the oldest goes first). */
export const MAX_TOASTS = 3;

let next = 1;

function dismiss(id: number) {
  toasts = toasts.filter((x) => x.id !== id);
  subs.forEach((f) => f(toasts));
}
let toasts: Toast[] = [];
const subs = new Set<(t: Toast[]) => void>();

export function toast(text: string, kind: Toast['kind'] = 'info', href?: string, label?: string) {
  const t = { id: next++, text, kind, href, label };
  toasts = [...toasts.slice(-(MAX_TOASTS - 1)), t];
  subs.forEach((f) => f(toasts));
  setTimeout(() => dismiss(t.id), kind === 'bad' ? 8000 : 4500);
}

/**
 * The toasts, where they cover nothing: over the sidebar's free space (between
 * its links and its foot) on a wide window, in the page's flow under the top
 * bar on a narrow one (styles.css).
 */
export function Toasts() {
  const [list, setList] = useState(toasts);
  useEffect(() => {
    subs.add(setList);
    return () => void subs.delete(setList);
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite" data-testid="toasts">
      {list.map((t) => {
        const body = (
          <>
            {t.label && <b class="toast-label">{t.label}</b>}
            <span class="toast-text">
              <Ticked text={t.text} />
            </span>
          </>
        );
        return (
          <div class={`toast ${t.kind}`} key={t.id} data-testid="toast" onClick={() => dismiss(t.id)} title="Dismiss">
            {t.href ? (
              <a href={t.href} style={{ color: 'inherit' }}>
                {body}
              </a>
            ) : (
              <span>{body}</span>
            )}
          </div>
        );
      })}
    </div>
  );
}
