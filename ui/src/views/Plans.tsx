import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { useListNav, useLive, useResource, useTick } from '../lib/hooks';
import { go, href } from '../lib/router';
import { Empty, ErrorBanner, SkeletonRows } from '../components/ui';
import { PlanRow } from './rows';

const STATUSES = ['', 'PROPOSED', 'APPROVED', 'REJECTED', 'EXECUTING', 'SUCCEEDED', 'HALTED', 'EXPIRED', 'SUPERSEDED'];

export function Plans() {
  useTick();
  const [status, setStatus] = useState(() => sessionStorage.getItem('interlock.plansFilter') ?? '');
  const res = useResource(() => api.plans(status || undefined), [status]);
  useLive((e) => e.subject_kind === 'plan', res.reload);
  const plans = res.data?.plans ?? [];
  const keys = plans.map((p) => `plan:${p.plan_id}`);
  const nav = useListNav(keys, (k) => go(href.plan(k.slice(5))));
  return (
    <div class="page">
      <div class="page-head">
        <div>
          <h1>Plans</h1>
          <div class="sub">Every plan’s current revision, newest first.</div>
        </div>
      </div>
      <div class="filters">
        {STATUSES.map((s) => (
          <button
            class={`filter${s === status ? ' on' : ''}`}
            onClick={() => {
              sessionStorage.setItem('interlock.plansFilter', s);
              setStatus(s);
            }}
          >
            {s || 'All'}
          </button>
        ))}
      </div>
      {res.error && <ErrorBanner error={res.error} onRetry={res.reload} />}
      {!(res.error && !res.data) && (
      <div class="list" data-testid="plans">
        {!res.data ? (
          <SkeletonRows n={6} />
        ) : plans.length === 0 ? (
          <Empty title="No plans">{status ? `None is ${status}.` : 'Agents propose plans through the gateway’s propose_plan tool.'}</Empty>
        ) : (
          plans.map((p) => <PlanRow key={p.plan_id} p={p} selected={nav.selected === `plan:${p.plan_id}`} />)
        )}
      </div>
      )}
    </div>
  );
}
