// Keyboard shortcuts: a stack of key maps. The newest map that has the key wins;
// while a dialog's (modal) map is registered, only dialog maps are consulted.
// Keys typed into a text field are left alone, except Escape.
import { useLayoutEffect, useRef } from 'preact/hooks';

export type KeyMap = Record<string, (e: KeyboardEvent) => void>;

interface Entry {
  map: { current: KeyMap };
  modal: boolean;
}

const stack: Entry[] = [];
let gPending = false;
let gTimer: ReturnType<typeof setTimeout> | undefined;
let gMap: Record<string, () => void> = {};

/** Two-key "g x" navigation. */
export function setGoMap(m: Record<string, () => void>) {
  gMap = m;
}

function typing(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  if (!el || !el.tagName) return false;
  const tag = el.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || el.isContentEditable;
}

export function dispatch(e: KeyboardEvent) {
  if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  if (typing(e.target) && e.key !== 'Escape') return;
  // While a dialog is open only dialog maps count, whenever a page's map was
  // registered (a view that finished mounting after the dialog opened included).
  const dialogs = stack.filter((x) => x.modal);
  const layer = dialogs.length ? dialogs : stack;
  if (gPending && !dialogs.length) {
    gPending = false;
    const f = gMap[e.key];
    if (f) {
      e.preventDefault();
      f();
      return;
    }
  }
  for (let i = layer.length - 1; i >= 0; i--) {
    const f = layer[i].map.current[e.key];
    if (f) {
      e.preventDefault();
      f(e);
      return;
    }
  }
  if (e.key === 'g' && !dialogs.length) {
    gPending = true;
    clearTimeout(gTimer);
    gTimer = setTimeout(() => (gPending = false), 1200);
  }
}

/** Registers a key map; returns its removal. (`useKeys` is the hook form.) */
export function pushKeys(map: { current: KeyMap }, modal = false): () => void {
  const entry: Entry = { map, modal };
  stack.push(entry);
  return () => {
    const i = stack.indexOf(entry);
    if (i >= 0) stack.splice(i, 1);
  };
}

export function useKeys(map: KeyMap, opts: { modal?: boolean; enabled?: boolean } = {}) {
  const ref = useRef(map);
  ref.current = map;
  const enabled = opts.enabled ?? true;
  // Registered before the browser paints (a layout effect, not a passive one):
  // a key pressed as soon as a view is visible reaches that view's map. With
  // a passive effect, `u` pressed right after a plan appeared was dropped, as
  // the browser test saw once the review rendered faster.
  useLayoutEffect(() => (enabled ? pushKeys(ref, !!opts.modal) : undefined), [enabled, opts.modal]);
}
