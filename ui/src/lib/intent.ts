// A decision asked for from a list (a/r on a row): the detail view opens its
// dialog once it has loaded what the reviewer is about to sign.
let pending: { href: string; decision: 'approve' | 'reject' } | null = null;

export function setIntent(href: string, decision: 'approve' | 'reject') {
  pending = { href, decision };
}

export function takeIntent(href: string): 'approve' | 'reject' | null {
  if (pending && pending.href === href) {
    const d = pending.decision;
    pending = null;
    return d;
  }
  return null;
}
