import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useSectionNav } from '../lib/hooks';
import { takeIntent } from '../lib/intent';
import { backToList } from '../lib/router';
import { DecisionDialog, type DecisionTarget } from './Dialog';
import { asksForReason } from '../lib/effort';
import type { DecisionKind } from '../lib/statement';
import { toast } from './Toasts';

interface DecisionOptions {
  /** What an opened dialog signs (null until the subject has loaded). */
  target: DecisionTarget | null;
  /** The subject's hash now, so the dialog can tell it changed under the reviewer. */
  currentHash?: string;
  /** Which decisions the subject's state allows. */
  can: Record<DecisionKind, boolean>;
  /** The page's own address, under which a notification may leave an intent to decide. */
  intent: string;
  /** The loaded subject: a new value re-checks for a pending intent. */
  data: unknown;
  /** The page's other shortcuts (besides `u`/Esc, back to the list), off while the dialog is open. */
  keys: Record<string, () => void>;
  reload: () => void;
  /** The toast after a decision was recorded. */
  doneMessage: (result: Record<string, unknown>, decision: DecisionKind) => string;
}

export interface Decision {
  can: Record<DecisionKind, boolean>;
  /** The subject's risk (high and critical: Reject and Approve on equal footing). */
  risk?: string | null;
  open: (k: DecisionKind) => void;
  /** The dialog, while one is open. */
  dialog: JSX.Element | null;
}

/**
 * The approve/reject flow shared by the plan and server review pages: `a`/`r`
 * open the dialog, which freezes the target it was opened on (a live update
 * cannot swap what is signed), an intent left by a notification opens it on
 * arrival, and the outcome is toasted and the page reloaded.
 */
export function useDecision(o: DecisionOptions): Decision {
  const [kind, setKind] = useState<DecisionKind | null>(null);
  const [frozen, setFrozen] = useState<DecisionTarget | null>(null);
  function open(k: DecisionKind | null) {
    setFrozen(k ? o.target : null);
    setKind(k);
  }
  useEffect(() => {
    if (!o.data) return;
    const want = takeIntent(o.intent);
    if (want && o.can[want]) open(want);
  }, [o.data]);
  useSectionNav(
    kind
      ? {}
      : {
          a: () => o.can.approve && open('approve'),
          r: () => o.can.reject && open('reject'),
          u: backToList,
          Escape: backToList,
          ...o.keys,
        },
  );
  const dialog =
    kind && frozen ? (
      <DecisionDialog
        target={frozen}
        currentHash={o.currentHash}
        decision={kind}
        onClose={() => open(null)}
        onChanged={(m) => {
          open(null);
          toast(`Changed since you opened it; review it again. (${m})`, 'bad');
          o.reload();
        }}
        onDone={(r) => {
          open(null);
          toast(o.doneMessage(r, kind), kind === 'approve' ? 'ok' : 'info');
          o.reload();
        }}
      />
    ) : null;
  return { can: o.can, risk: o.target?.risk, open, dialog };
}

/**
 * The page head's Reject and Approve buttons, with their shortcuts shown. On a
 * high or critical item neither is the obvious one: both look alike (issue 46).
 */
export function DecisionButtons({ decision, approveLabel }: { decision: Decision; approveLabel: string }) {
  const equal = asksForReason(decision.risk);
  return (
    <div class="actions" data-footing={equal ? 'equal' : undefined}>
      <button
        class={equal ? 'btn decide' : 'btn danger'}
        disabled={!decision.can.reject}
        onClick={() => decision.open('reject')}
        data-testid="reject"
      >
        Reject <kbd>r</kbd>
      </button>
      <button
        class={equal ? 'btn decide' : 'btn primary'}
        disabled={!decision.can.approve}
        onClick={() => decision.open('approve')}
        data-testid="approve"
      >
        {approveLabel} <kbd>a</kbd>
      </button>
    </div>
  );
}
