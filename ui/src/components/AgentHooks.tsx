// Settings → "Guard a coding agent's own tools" (issue 40): Interlock's hooks in
// Claude Code, Cursor, Codex and Gemini CLI, so their shell commands, file edits
// and web fetches ask the gateway first. Each agent's settings diff is shown before
// anything is written; the desktop app installs and undoes after its native dialog,
// a browser shows the command the machine's owner runs.

import { useState } from 'preact/hooks';
import {
  agentHooks,
  canChangeHooks,
  diffStat,
  hooksCommand,
  isHookPlan,
  type AgentHooks as Agent,
  type OnUnreachable,
} from '../lib/agentHooks';
import { desktopErrorCode, desktopErrorMessage } from '../lib/desktop';
import { useResource } from '../lib/hooks';
import { DiffView, LayoutToggle, type DiffLayout } from './Diff';
import { ConfirmDialog } from './Dialog';
import { toast } from './Toasts';
import { RowOutcome, SkeletonBlock, Ticked } from './ui';

function State({ a }: { a: Agent }) {
  const plan = isHookPlan(a.plan) ? a.plan : null;
  if (a.installed && plan && !plan.changes_anything)
    return (
      <span class="status s-APPROVED" data-testid="hooks-state">
        GUARDED
      </span>
    );
  if (a.installed)
    return (
      <span class="status s-PENDING" data-testid="hooks-state">
        INSTALLED · CHANGED
      </span>
    );
  return (
    <span class="status" data-testid="hooks-state">
      {a.exists ? 'NOT GUARDED' : 'NO SETTINGS YET'}
    </span>
  );
}

function AgentRow({ a, onUnreachable, onChange }: { a: Agent; onUnreachable: OnUnreachable; onChange: () => void }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [confirmUndo, setConfirmUndo] = useState(false);
  // A settings file gains a block: read in one column, long commands wrapped.
  const [layout, setLayout] = useState<DiffLayout>('line-by-line');
  const plan = isHookPlan(a.plan) ? a.plan : null;
  const owner = canChangeHooks();
  const stat = plan ? diffStat(plan.diff) : null;
  const act = async (what: 'install' | 'undo') => {
    setBusy(true);
    setError(null);
    setNote(null);
    try {
      if (what === 'install') {
        const r = await agentHooks.install(a.client, onUnreachable);
        setNote(
          r.changed
            ? `${r.file} written with agent key ${r.agent}. ${a.name} asks Interlock before each use of its tools from its next session.` +
                (r.still_to_do ? ` Still to do: ${r.still_to_do}.` : '')
            : `${a.name} already had these hooks.`,
        );
        toast(`${a.name}: hooks installed`, 'ok');
      } else {
        const r = await agentHooks.undo(a.client);
        setNote(
          `${r.file} ${r.removed ? 'removed (it did not exist before)' : 'restored byte for byte'}` +
            (r.agent_revoked ? `; agent key ${r.agent_revoked} revoked.` : '.'),
        );
        toast(`${a.name}: hooks removed`, 'info');
      }
      setOpen(false);
      onChange();
    } catch (e) {
      if (desktopErrorCode(e) !== 'cancelled') setError(desktopErrorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="client" data-testid="agent-hooks" data-client={a.client} data-installed={String(a.installed)}>
      <div class="card-head">
        <h3>{a.name}</h3>
        <code class="faint ellipsis" title={a.file} style={{ fontSize: '12px' }}>
          {a.file}
        </code>
        <span class="right row-gap" style={{ marginLeft: 'auto', flexWrap: 'nowrap' }}>
          <State a={a} />
          {plan?.changes_anything && (
            <button
              class="btn small"
              aria-expanded={open}
              onClick={() => setOpen(!open)}
              data-testid="hooks-show-diff"
              title="What installing writes in the settings file"
            >
              {open ? 'Hide changes' : 'Show changes'}{' '}
              {stat && (
                <span class="diff-stat">
                  <span class="add">+{stat.added}</span> <span class="del">−{stat.removed}</span>
                </span>
              )}
            </button>
          )}
          {owner && a.installed && (
            <button class="btn small" disabled={busy} onClick={() => setConfirmUndo(true)} data-testid="hooks-undo">
              Undo
            </button>
          )}
          {owner && (
            <button
              class="btn small primary"
              disabled={busy || !plan?.changes_anything}
              onClick={() => void act('install')}
              data-testid="hooks-install"
            >
              Install
            </button>
          )}
        </span>
      </div>
      {!plan && (
        <div class="error-box" role="alert" style={{ margin: '8px 16px' }}>
          <Ticked text={(a.plan as { error: string }).error} />
        </div>
      )}
      {open && plan && (
        <div class="hooks-diff" data-testid="hooks-diff">
          <div class="row-gap" style={{ justifyContent: 'flex-end', margin: '0 16px 6px' }}>
            <LayoutToggle layout={layout} set={setLayout} />
          </div>
          <DiffView diff={plan.diff} layout={layout} minHeight={120} />
        </div>
      )}
      {a.still_to_do && (a.installed || plan?.changes_anything) && (
        <p class="faint" style={{ margin: '8px 16px' }} data-testid="hooks-still-to-do">
          <Ticked text={`Then: ${a.still_to_do}.`} />
        </p>
      )}
      {!owner && (plan?.changes_anything || a.installed) && (
        <p class="muted" style={{ margin: '8px 16px' }} data-testid="hooks-owner-command">
          {plan?.changes_anything ? 'Installing rewrites a file this agent runs' : 'Undoing takes the check away'}, so only
          this machine's owner does it: run{' '}
          <code>{hooksCommand(a.client, plan?.changes_anything ? 'install' : 'undo', onUnreachable)}</code> in a
          terminal there, or use the desktop app.
        </p>
      )}
      <RowOutcome note={note} error={error} testid="hooks" />
      {confirmUndo && (
        <ConfirmDialog
          title={`Remove Interlock's hooks from ${a.name}?`}
          confirm="Remove hooks"
          onClose={() => setConfirmUndo(false)}
          onConfirm={() => {
            setConfirmUndo(false);
            void act('undo');
          }}
        >
          Its settings file is given back as it was before, byte for byte, and the hooks' agent key is revoked: its
          shell commands, edits and fetches stop asking Interlock first. The app asks you once more in its own dialog.
        </ConfirmDialog>
      )}
    </div>
  );
}

/** Settings' "Guard a coding agent's own tools". */
export function AgentHooksCard() {
  const [onUnreachable, setOnUnreachable] = useState<OnUnreachable>('deny');
  const list = useResource(() => agentHooks.list(onUnreachable), [onUnreachable]);
  if (list.error && (list.error as { code?: string }).code === 'not_available') return null;
  return (
    <div class="card connect-clients agent-hooks" data-testid="agent-hooks-card">
      <div class="card-head">
        <h3>Guard a coding agent's own tools</h3>
        <span class="faint" style={{ marginLeft: 'auto' }}>
          shell commands, edits and fetches ask Interlock first
        </span>
      </div>
      <div class="row-gap hooks-fallback" style={{ margin: '10px 16px' }}>
        <span class="muted">If Interlock cannot answer:</span>
        <span class="diff-toggle" role="group" aria-label="If Interlock cannot answer">
          <button
            class={onUnreachable === 'deny' ? 'on' : ''}
            aria-pressed={onUnreachable === 'deny'}
            onClick={() => setOnUnreachable('deny')}
            data-testid="hooks-deny"
          >
            Deny the use
          </button>
          <button
            class={onUnreachable === 'ask' ? 'on' : ''}
            aria-pressed={onUnreachable === 'ask'}
            onClick={() => setOnUnreachable('ask')}
            data-testid="hooks-ask"
          >
            Let the agent ask me
          </button>
        </span>
      </div>
      {list.error ? (
        <div class="error-box" role="alert" style={{ margin: '12px 16px' }}>
          {list.error.message}
        </div>
      ) : !list.data ? (
        <SkeletonBlock lines={4} />
      ) : (
        list.data.clients.map((a) => (
          <AgentRow key={a.client} a={a} onUnreachable={onUnreachable} onChange={() => list.reload()} />
        ))
      )}
    </div>
  );
}
