import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { events, type GatewayEvent } from './events';
import { useKeys } from './keys';
import { zonedTime } from './receipt';

export interface Resource<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/** Fetches on mount and when deps change; keeps the last data while reloading (no flicker). */
export function useResource<T>(fetcher: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const f = useRef(fetcher);
  f.current = fetcher;
  const reload = useCallback(() => {
    const n = ++seq.current;
    setLoading(true);
    f.current().then(
      (d) => {
        if (n !== seq.current) return;
        setData(d);
        setError(undefined);
        setLoading(false);
      },
      (e: Error) => {
        if (n !== seq.current) return;
        setError(e);
        setLoading(false);
      },
    );
  }, []);
  useEffect(() => {
    setData(undefined);
    reload();
  }, deps);
  return { data, error, loading, reload };
}

/** Calls `f` (debounced) for matching gateway events, and after every reconnect. */
export function useLive(match: (e: GatewayEvent) => boolean, f: () => void) {
  const m = useRef(match);
  m.current = match;
  const cb = useRef(f);
  cb.current = f;
  useEffect(() => {
    let t: ReturnType<typeof setTimeout> | undefined;
    const unsub = events.subscribe((e) => {
      if (e.type === 'connected' || m.current(e as GatewayEvent)) {
        clearTimeout(t);
        t = setTimeout(() => cb.current(), 120);
      }
    });
    return () => {
      clearTimeout(t);
      unsub();
    };
  }, []);
}

/** j/k (and arrows) move a selection through `keys`; Enter/o opens it. */
export function useListNav(keys: string[], open: (key: string) => void, extra: Record<string, (key: string) => void> = {}) {
  const [sel, setSel] = useState<string | null>(null);
  const idx = sel === null ? -1 : keys.indexOf(sel);
  const current = idx >= 0 ? idx : keys.length ? 0 : -1;
  const move = (d: number) => {
    if (!keys.length) return;
    const next = Math.max(0, Math.min(keys.length - 1, current + d));
    setSel(keys[next]);
    requestAnimationFrame(() =>
      document.querySelector(`[data-key="${CSS.escape(keys[next])}"]`)?.scrollIntoView({ block: 'nearest' }),
    );
  };
  const withSel = (f: (k: string) => void) => () => {
    if (current >= 0) f(keys[current]);
  };
  const map: Record<string, () => void> = {
    j: () => move(1),
    ArrowDown: () => move(1),
    k: () => move(-1),
    ArrowUp: () => move(-1),
    Enter: withSel(open),
    o: withSel(open),
  };
  for (const [k, f] of Object.entries(extra)) map[k] = withSel(f);
  useKeys(map);
  return { selected: current >= 0 ? keys[current] : null, select: setSel };
}

/** j/k move a highlight through elements marked `data-nav` inside the page. */
export function useSectionNav(extra: Record<string, (e: KeyboardEvent) => void> = {}) {
  const pos = useRef(-1);
  const move = (d: number) => {
    // Sections inside a closed <details> are skipped (there is nothing to see).
    const els = Array.from(document.querySelectorAll<HTMLElement>('[data-nav]')).filter((e) => e.getClientRects().length > 0);
    if (!els.length) return;
    els.forEach((e) => e.classList.remove('nav-current'));
    pos.current = Math.max(0, Math.min(els.length - 1, pos.current + d));
    const el = els[pos.current];
    el.classList.add('nav-current');
    el.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  };
  useKeys({ j: () => move(1), k: () => move(-1), ...extra });
}

export function ago(unix: number | undefined | null, now = Date.now() / 1000): string {
  if (!unix) return '';
  const d = Math.round(now - unix);
  const s = Math.abs(d);
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  const h = Math.round(s / 3600);
  const span = m < 60 ? `${m}m` : h < 24 ? `${h}h` : `${Math.round(s / 86400)}d`;
  if (s >= 86400 * 14) return new Date(unix * 1000).toLocaleDateString();
  // Future times (an expiry) read "in 2h", past ones "2h ago".
  return d < 0 ? `in ${span}` : `${span} ago`;
}

/** A time in full, with its timezone (`2026-12-06 18:44:43 UTC+01:00`): never ambiguous. */
export function fullTime(unix: number | undefined | null): string {
  return unix ? zonedTime(unix) : '';
}

/** Re-renders every 30 s so relative times stay right. */
export function useTick(ms = 30_000) {
  const [, set] = useState(0);
  useEffect(() => {
    const t = setInterval(() => set((n) => n + 1), ms);
    return () => clearInterval(t);
  }, [ms]);
}
