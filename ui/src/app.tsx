import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './lib/api';
import { isDesktop, onTokenChange, token } from './lib/config';
import { events, type StreamState } from './lib/events';
import { dispatch, setGoMap, useKeys } from './lib/keys';
import { setIntent } from './lib/intent';
import { NARROW_QUERY } from './lib/narrow';
import { actedRecently } from './lib/decide';
import { go, href, rememberList, useRoute, type Route } from './lib/router';
import { HelpDialog } from './components/Dialog';
import { toast, Toasts } from './components/Toasts';
import { eventLabel } from './lib/text';
import { focusPage } from './lib/focus';
import { Inbox } from './views/Inbox';
import { Plans } from './views/Plans';
import { PlanView } from './views/Plan';
import { Servers } from './views/Servers';
import { Standing } from './views/Standing';
import { ServerView } from './views/Server';
import { Log } from './views/Log';
import { Receipts } from './views/Receipts';
import { Overview } from './views/Overview';
import { Settings } from './views/Settings';
import { Signin } from './views/Signin';
import { Welcome } from './views/Welcome';

const STATE_TEXT: Record<StreamState, string> = {
  idle: 'Not connected',
  connecting: 'Connecting…',
  live: 'Live',
  offline: 'Reconnecting…',
  unauthorized: 'API key needed',
};

function NavItem({ h, label, icon, active, count, hint }: { h: string; label: string; icon: string; active: boolean; count?: number; hint?: string }) {
  return (
    <a class={`nav-item${active ? ' active' : ''}`} href={h} aria-current={active ? 'page' : undefined} data-nav-label={label}>
      <span class="nav-icon">{icon}</span>
      {label}
      {count ? (
        <span class="count" data-testid={`count-${label.toLowerCase()}`}>
          {count}
        </span>
      ) : hint ? (
        <span class="hint">{hint}</span>
      ) : null}
    </a>
  );
}

/** Enter or Space on the skip link, the menu button or a menu link activates
 * it, not the page's own keys (the inbox's Enter opens its selected row). */
const keepActivation = (e: KeyboardEvent) => {
  if (e.key === 'Enter' || e.key === ' ') e.stopPropagation();
};

const SECTION_TITLE: Record<string, string> = {
  inbox: 'Inbox',
  overview: 'Overview',
  plans: 'Plans',
  servers: 'Servers',
  standing: 'Standing',
  log: 'Log',
  receipts: 'Receipts',
  settings: 'Settings',
  signin: 'Sign in',
  welcome: 'Welcome',
};


function section(r: Route): string {
  switch (r.name) {
    case 'plan':
      return 'plans';
    case 'server':
      return 'servers';
    default:
      return r.name;
  }
}

export function App() {
  const route = useRoute();
  const [stream, setStream] = useState<StreamState>(events.state);
  const [count, setCount] = useState(0);
  const [help, setHelp] = useState(false);
  // A new API key remounts the view, so it loads again with it.
  const [epoch, setEpoch] = useState(0);
  // The menu on a narrow window: closed on every route, opened by the top bar.
  const [menu, setMenu] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const nav = useRef<HTMLElement>(null);
  const mainRef = useRef<HTMLElement>(null);
  const routed = useRef(false);

  useEffect(() => {
    const off = events.onState(setStream);
    events.start();
    const offTok = onTokenChange(() => {
      events.start();
      setEpoch((n) => n + 1);
      void api.inbox().then((r) => setCount(r.items.length), () => setCount(0));
    });
    const onKey = (e: KeyboardEvent) => dispatch(e);
    document.addEventListener('keydown', onKey);
    const unsub = events.subscribe((e) => {
      if (e.type === 'connected') return;
      const ev = e as { type: string; subject_kind: string; subject: string; title: string };
      const h =
        ev.subject_kind === 'plan'
          ? href.plan(ev.subject)
          : ev.subject_kind === 'standing'
            ? href.standing()
            : href.server(ev.subject);
      const bad = /quarantined|halted|rejected/.test(ev.type);
      // Our own decisions are announced by the dialog already.
      if (!actedRecently(ev.subject_kind, ev.subject)) toast(ev.title, bad ? 'bad' : 'info', h, eventLabel(ev.type));
      // Keep the inbox count fresh wherever we are.
      void api.inbox().then((r) => setCount(r.items.length), () => undefined);
    });
    if (token()) void api.inbox().then((r) => setCount(r.items.length), () => undefined);
    return () => {
      off();
      offTok();
      unsub();
      document.removeEventListener('keydown', onKey);
      events.stop();
    };
  }, []);

  useEffect(() => {
    setGoMap({
      i: () => go(href.inbox()),
      p: () => go(href.plans()),
      s: () => go(href.servers()),
      a: () => go(href.standing()),
      l: () => go(href.log()),
      r: () => go(href.receipts()),
      o: () => go(href.overview()),
      ',': () => go(href.settings()),
    });
  }, []);

  useEffect(() => {
    if (route.name === 'inbox') rememberList(href.inbox());
    if (route.name === 'plans') rememberList(href.plans());
    if (route.name === 'servers') rememberList(href.servers());
    if (route.name === 'standing') rememberList(href.standing());
    window.scrollTo(0, 0);
    setMenu(false);
    // A new page: focus its heading (keyboard and screen-reader users start
    // there, and hear where they are), not on the first load.
    if (routed.current) focusPage(mainRef.current);
    routed.current = true;
    const titles: Record<string, string> = {
      inbox: 'Inbox',
      plans: 'Plans',
      servers: 'Servers',
      standing: 'Standing approvals',
      log: 'Log',
      receipts: 'Receipts',
      overview: 'Overview',
      settings: 'Settings',
      signin: 'Sign in',
      welcome: 'Welcome',
      plan: `Plan ${(route as { id?: string }).id ?? ''}`,
      server: `Server ${(route as { name_?: string }).name_ ?? ''}`,
    };
    document.title = `${titles[route.name]} · Interlock`;
  }, [route]);

  useKeys({ '?': () => setHelp(true) });

  // Opened: focus its first link. A window widened past the narrow layout closes it.
  useEffect(() => {
    if (!menu) return;
    nav.current?.querySelector<HTMLElement>('.nav-item')?.focus();
    const mq = window.matchMedia(NARROW_QUERY);
    const onChange = () => !mq.matches && setMenu(false);
    mq.addEventListener('change', onChange);
    return () => mq.removeEventListener('change', onChange);
  }, [menu]);

  const closeMenu = (refocus: boolean) => {
    setMenu(false);
    if (refocus) menuButton.current?.focus();
  };

  const active = section(route);
  let view;
  switch (route.name) {
    case 'plans':
      view = <Plans />;
      break;
    case 'plan':
      view = <PlanView key={route.id} id={route.id} />;
      break;
    case 'servers':
      view = <Servers />;
      break;
    case 'server':
      view = <ServerView key={route.name_} name={route.name_} />;
      break;
    case 'standing':
      view = <Standing />;
      break;
    case 'log':
      view = <Log />;
      break;
    case 'receipts':
      view = <Receipts />;
      break;
    case 'overview':
      view = <Overview />;
      break;
    case 'settings':
      view = <Settings />;
      break;
    case 'signin':
      view = <Signin token={route.token} />;
      break;
    case 'welcome':
      view = <Welcome />;
      break;
    default:
      view = (
        <Inbox
          onCount={setCount}
          openDecision={(h, d) => {
            setIntent(h, d);
            go(h);
          }}
        />
      );
  }
  return (
    <div class={`shell${menu ? ' menu-open' : ''}`}>
      <a
        class="skip-link"
        href="#main-content"
        data-testid="skip-link"
        onKeyDown={keepActivation}
        onClick={(e) => {
          // Not a hash change: the hash is the route.
          e.preventDefault();
          mainRef.current?.focus();
          mainRef.current?.scrollIntoView({ block: 'start' });
        }}
      >
        Skip to content
      </a>
      <header class="topbar" data-testid="topbar" onKeyDown={keepActivation}>
        <button
          ref={menuButton}
          type="button"
          class="menu-button"
          aria-label="Menu"
          aria-expanded={menu}
          aria-controls="main-nav"
          data-testid="menu-button"
          onClick={() => setMenu((m) => !m)}
        >
          <span class="menu-icon" aria-hidden="true" />
          {count ? (
            <span class="count" aria-hidden="true">
              {count}
            </span>
          ) : null}
        </button>
        <span class="brand-mark" aria-hidden="true">
          ◆
        </span>
        <span class="topbar-title">{SECTION_TITLE[active] ?? 'Interlock'}</span>
        <span class={`dot ${stream}`} title={STATE_TEXT[stream]} data-testid="topbar-stream" />
      </header>
      {menu && <div class="nav-backdrop" onClick={() => closeMenu(false)} data-testid="nav-backdrop" />}
      <nav
        class="sidebar"
        id="main-nav"
        aria-label="Main"
        ref={nav}
        onKeyDown={(e) => {
          keepActivation(e);
          if (menu && e.key === 'Escape') {
            e.stopPropagation();
            closeMenu(true);
          }
        }}
        onFocusOut={(e) => {
          // Tabbing out of the open menu closes it (it covers the page).
          const to = e.relatedTarget as Node | null;
          if (menu && to && !nav.current?.contains(to) && to !== menuButton.current) setMenu(false);
        }}
        onClick={(e) => {
          if (menu && (e.target as HTMLElement).closest('a')) setMenu(false);
        }}
      >
        <div class="brand">
          <span class="brand-mark">◆</span>
          Interlock
        </div>
        <NavItem h={href.inbox()} label="Inbox" icon="✉" active={active === 'inbox'} count={count} />
        <NavItem h={href.overview()} label="Overview" icon="◔" active={active === 'overview'} hint="g o" />
        <NavItem h={href.plans()} label="Plans" icon="▤" active={active === 'plans'} hint="g p" />
        <NavItem h={href.servers()} label="Servers" icon="⛁" active={active === 'servers'} hint="g s" />
        <NavItem h={href.standing()} label="Standing" icon="⟳" active={active === 'standing'} hint="g a" />
        <NavItem h={href.log()} label="Log" icon="≡" active={active === 'log'} hint="g l" />
        <NavItem h={href.receipts()} label="Receipts" icon="✓" active={active === 'receipts'} hint="g r" />
        <NavItem h={href.settings()} label="Settings" icon="⚙" active={active === 'settings'} hint="g ," />
        <div class="sidebar-foot">
          <div class="live" data-testid="stream-state" data-state={stream} title="The live event stream">
            <span class={`dot ${stream}`} />
            {STATE_TEXT[stream]}
          </div>
          <button
            class="btn small ghost"
            style={{ justifyContent: 'flex-start', padding: 0 }}
            onClick={() => {
              setMenu(false); // the help dialog shows over the page, not under the open menu
              setHelp(true);
            }}
          >
            <kbd>?</kbd> Keyboard shortcuts
          </button>
          <span class="faint">{isDesktop() ? 'Desktop app' : 'Browser'}</span>
        </div>
      </nav>
      <main class="main" id="main-content" tabIndex={-1} ref={mainRef}>
        <Toasts />
        <div key={epoch} style={{ display: 'contents' }}>
          {view}
        </div>
      </main>
      {help && <HelpDialog onClose={() => setHelp(false)} />}
    </div>
  );
}
