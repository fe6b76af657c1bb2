import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { useListNav, useLive, useResource, useTick } from '../lib/hooks';
import { go } from '../lib/router';
import { Empty, ErrorBanner, SkeletonRows } from '../components/ui';
import { groupInbox, groupTitle, type HeldGroup } from '../lib/inboxGroups';
import type { InboxItem } from '../lib/api';
import { RiskBadge } from '../components/ui';
import { itemHref, itemKey, PlanRow, ServerInboxRow } from './rows';

/** A group of similar held calls: one fixed-height row; Enter or a click opens it. */
function GroupRow({ g, open, selected, onToggle }: { g: HeldGroup; open: boolean; selected: boolean; onToggle: () => void }) {
  return (
    <div
      class={`row group${selected ? ' selected' : ''}`}
      data-key={g.key}
      data-testid="group-row"
      role="button"
      aria-expanded={open}
      tabIndex={-1}
      onClick={onToggle}
    >
      <span class={`bar risk-${g.risk}`} />
      <span class="kind" title="Held tool calls">
        {open ? '▾' : '▸'}
      </span>
      <span class="main-col">
        <div class="t">{groupTitle(g)}</div>
        <div class="s">held calls of one tool by one agent · open to review each</div>
      </span>
      <span class="col w-badge">
        <RiskBadge risk={g.risk} label="Risk" />
      </span>
      <span class="col w-status">
        <span class="count-badge" data-testid="group-count">{g.members.length}</span>
      </span>
      <span class="time" />
    </div>
  );
}

export function Inbox({ onCount, openDecision }: { onCount: (n: number) => void; openDecision: (href: string, d: 'approve' | 'reject') => void }) {
  useTick();
  const res = useResource(() => api.inbox(), []);
  useLive(() => true, res.reload);
  const items = res.data?.items ?? [];
  const [opened, setOpened] = useState<Set<string>>(new Set());
  const entries = groupInbox(items);
  // The rows as shown: a group, then its members while it is open.
  const rows: ({ kind: 'item'; item: InboxItem; member?: boolean } | HeldGroup)[] = entries.flatMap((e) =>
    e.kind === 'group' && opened.has(e.key)
      ? [e, ...e.members.map((m) => ({ kind: 'item' as const, item: m as InboxItem, member: true }))]
      : [e],
  );
  const rowKey = (r: (typeof rows)[number]) => (r.kind === 'group' ? r.key : itemKey(r.item));
  const keys = rows.map(rowKey);
  const byKey = new Map(items.map((i) => [itemKey(i), i]));
  const toggle = (k: string) =>
    setOpened((o) => {
      const n = new Set(o);
      if (n.has(k)) n.delete(k);
      else n.add(k);
      return n;
    });
  // Rows that arrived while the page was open are highlighted briefly.
  const seen = useRef<Set<string> | null>(null);
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  useEffect(() => {
    if (!res.data) return;
    if (seen.current) {
      const added = keys.filter((k) => !seen.current!.has(k));
      if (added.length) setFresh(new Set(added));
    }
    seen.current = new Set(keys);
    onCount(items.length);
  }, [res.data]);
  const open = (k: string) => (byKey.has(k) ? go(itemHref(byKey.get(k)!)) : toggle(k));
  const nav = useListNav(keys, open, {
    a: (k) => byKey.has(k) && openDecision(itemHref(byKey.get(k)!), 'approve'),
    r: (k) => byKey.has(k) && openDecision(itemHref(byKey.get(k)!), 'reject'),
  });
  const plans = items.filter((i) => i.kind === 'plan').length;
  return (
    <div class="page">
      <div class="page-head">
        <div>
          <h1>Inbox</h1>
          <div class="sub">
            {res.data ? (
              <span data-testid="inbox-summary">
                {items.length === 0
                  ? 'Nothing waits for you.'
                  : `${plans} plan${plans === 1 ? '' : 's'} and ${items.length - plans} server${items.length - plans === 1 ? '' : 's'} wait for review`}
              </span>
            ) : (
              <span>&nbsp;</span>
            )}
          </div>
        </div>
        <div class="actions muted" style={{ fontSize: '12.5px', alignItems: 'center' }}>
          <kbd>j</kbd>
          <kbd>k</kbd> move · <kbd>Enter</kbd> open · <kbd>?</kbd> help
        </div>
      </div>
      {res.error && <ErrorBanner error={res.error} onRetry={res.reload} />}
      {!(res.error && !res.data) && (
      <div class="list" data-testid="inbox">
        {!res.data ? (
          <SkeletonRows n={5} />
        ) : items.length === 0 ? (
          <Empty title="All clear">
            <span>New plans and server changes appear here as they happen.</span>
          </Empty>
        ) : (
          rows.map((r) => {
            if (r.kind === 'group')
              return (
                <GroupRow key={r.key} g={r} open={opened.has(r.key)} selected={nav.selected === r.key} onToggle={() => toggle(r.key)} />
              );
            const i = r.item;
            const k = itemKey(i);
            return i.kind === 'plan' ? (
              <PlanRow key={k} p={i} selected={nav.selected === k} fresh={fresh.has(k)} member={r.member} />
            ) : (
              <ServerInboxRow key={k} s={i} selected={nav.selected === k} fresh={fresh.has(k)} />
            );
          })
        )}
      </div>
      )}
    </div>
  );
}
