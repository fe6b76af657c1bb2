import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { useListNav, useLive, useResource, useTick } from '../lib/hooks';
import { go } from '../lib/router';
import { Empty, ErrorBanner, SkeletonRows } from '../components/ui';
import { itemHref, itemKey, PlanRow, ServerInboxRow } from './rows';

export function Inbox({ onCount, openDecision }: { onCount: (n: number) => void; openDecision: (href: string, d: 'approve' | 'reject') => void }) {
  useTick();
  const res = useResource(() => api.inbox(), []);
  useLive(() => true, res.reload);
  const items = res.data?.items ?? [];
  const keys = items.map(itemKey);
  const byKey = new Map(items.map((i) => [itemKey(i), i]));
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
  const open = (k: string) => go(itemHref(byKey.get(k)!));
  const nav = useListNav(keys, open, {
    a: (k) => openDecision(itemHref(byKey.get(k)!), 'approve'),
    r: (k) => openDecision(itemHref(byKey.get(k)!), 'reject'),
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
          items.map((i) =>
            i.kind === 'plan' ? (
              <PlanRow key={itemKey(i)} p={i} selected={nav.selected === itemKey(i)} fresh={fresh.has(itemKey(i))} />
            ) : (
              <ServerInboxRow key={itemKey(i)} s={i} selected={nav.selected === itemKey(i)} fresh={fresh.has(itemKey(i))} />
            ),
          )
        )}
      </div>
      )}
    </div>
  );
}
