// Hash routes (#/plans/ID): they work the same served by the gateway, from a
// file, or inside the desktop app's web view.
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { name: 'inbox' }
  | { name: 'plans' }
  | { name: 'plan'; id: string }
  | { name: 'servers' }
  | { name: 'server'; name_: string }
  | { name: 'standing' }
  | { name: 'log' }
  | { name: 'receipts' }
  | { name: 'overview' }
  | { name: 'settings' }
  | { name: 'signin'; token: string }
  | { name: 'welcome' };

export function parse(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  switch (parts[0]) {
    case 'plans':
      return parts[1] ? { name: 'plan', id: parts[1] } : { name: 'plans' };
    case 'servers':
      return parts[1] ? { name: 'server', name_: parts[1] } : { name: 'servers' };
    case 'standing':
      return { name: 'standing' };
    case 'log':
      return { name: 'log' };
    case 'receipts':
      return { name: 'receipts' };
    case 'overview':
      return { name: 'overview' };
    case 'settings':
      return { name: 'settings' };
    case 'welcome':
      return { name: 'welcome' };
    case 'signin':
      return parts[1] ? { name: 'signin', token: parts[1] } : { name: 'inbox' };
    default:
      return { name: 'inbox' };
  }
}

export const href = {
  inbox: () => '#/inbox',
  plans: () => '#/plans',
  plan: (id: string) => `#/plans/${encodeURIComponent(id)}`,
  servers: () => '#/servers',
  server: (name: string) => `#/servers/${encodeURIComponent(name)}`,
  standing: () => '#/standing',
  log: () => '#/log',
  receipts: () => '#/receipts',
  overview: () => '#/overview',
  settings: () => '#/settings',
  welcome: () => '#/welcome',
};

export function go(h: string) {
  if (location.hash !== h) location.hash = h;
}

export function useRoute(): Route {
  const [r, setR] = useState(() => parse(location.hash));
  useEffect(() => {
    const f = () => setR(parse(location.hash));
    window.addEventListener('hashchange', f);
    // The hash may have changed between the first render and this effect (a
    // click, or a test, while a slow first load was painting): its
    // hashchange fired before anyone listened, so read it now. The WebKitGTK
    // test met exactly this on a Postgres run: #/receipts showing the inbox.
    const now = parse(location.hash);
    setR((prev) => (JSON.stringify(prev) === JSON.stringify(now) ? prev : now));
    return () => window.removeEventListener('hashchange', f);
  }, []);
  return r;
}

let lastList = href.inbox();

/** Lists remember themselves, so `u`/Esc in a detail view returns there. */
export function rememberList(h: string) {
  lastList = h;
}

export function backToList() {
  go(lastList);
}
