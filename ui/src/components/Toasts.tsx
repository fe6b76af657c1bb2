import { useEffect, useState } from 'preact/hooks';

export interface Toast {
  id: number;
  text: string;
  kind: 'info' | 'ok' | 'bad';
  href?: string;
}

let next = 1;

function dismiss(id: number) {
  toasts = toasts.filter((x) => x.id !== id);
  subs.forEach((f) => f(toasts));
}
let toasts: Toast[] = [];
const subs = new Set<(t: Toast[]) => void>();

export function toast(text: string, kind: Toast['kind'] = 'info', href?: string) {
  const t = { id: next++, text, kind, href };
  toasts = [...toasts.slice(-3), t];
  subs.forEach((f) => f(toasts));
  setTimeout(() => dismiss(t.id), kind === 'bad' ? 8000 : 4500);
}

export function Toasts() {
  const [list, setList] = useState(toasts);
  useEffect(() => {
    subs.add(setList);
    return () => void subs.delete(setList);
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((t) => (
        <div class={`toast ${t.kind}`} key={t.id} data-testid="toast" onClick={() => dismiss(t.id)} title="Dismiss">
          {t.href ? (
            <a href={t.href} style={{ color: 'inherit' }}>
              {t.text}
            </a>
          ) : (
            t.text
          )}
        </div>
      ))}
    </div>
  );
}
