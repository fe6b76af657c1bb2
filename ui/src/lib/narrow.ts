// The narrow layout (≤ 600 px, issue 46): one column, so a list's detail pane
// is below the list, out of sight.

export const NARROW_QUERY = '(max-width: 600px)';

export function isNarrow(): boolean {
  return typeof window !== 'undefined' && !!window.matchMedia?.(NARROW_QUERY).matches;
}

/** After a click on a row: on a narrow window, bring its detail (below the list) into view. */
export function revealOnNarrow(id: string) {
  if (!isNarrow()) return;
  requestAnimationFrame(() => document.getElementById(id)?.scrollIntoView({ block: 'start' }));
}
