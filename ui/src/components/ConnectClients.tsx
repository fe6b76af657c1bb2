import { useState } from 'preact/hooks';
import { canChangeClients, clients, isPlan, ownerCommand, type ClientInfo, type ConnectPlan, type ServerAction } from '../lib/clients';
import { desktopErrorCode, desktopErrorMessage } from '../lib/desktop';
import { useResource } from '../lib/hooks';
import { ConfirmDialog } from './Dialog';
import { toast } from './Toasts';
import { RowOutcome, SkeletonBlock, Ticked } from './ui';

function ServerLine({ s }: { s: ServerAction }) {
  let what;
  switch (s.action) {
    case 'import':
      what = (
        <>
          → upstream <code>{s.upstream}</code> <span class="faint">({s.transport})</span>, pending review
          {s.secrets.length > 0 && (
            <>
              ; {s.secrets.join(', ')} into the OS keychain
            </>
          )}
          {s.shared && <>; shares the upstream already there</>}
          {s.sandbox && !s.shared && (
            <div class="faint" data-testid="client-server-sandbox">
              {s.sandbox}
            </div>
          )}
        </>
      );
      break;
    case 'already':
      what = <>already behind the gateway</>;
      break;
    default:
      what = (
        <span class="muted">
          stays in the client: <Ticked text={s.reason} />
        </span>
      );
  }
  return (
    <tr data-testid="client-server" data-server={s.name} data-action={s.action}>
      <td style={{ width: '28%' }}>
        <code>{s.name}</code>
      </td>
      <td title={s.action === 'keep' ? s.reason : undefined}>{what}</td>
    </tr>
  );
}

function Reach({ plan }: { plan: ConnectPlan }) {
  if (!plan.entry) return <p class="muted" style={{ margin: '8px 16px' }}>The client already reaches the gateway.</p>;
  const r = plan.entry.reach;
  return (
    <p style={{ margin: '8px 16px' }} data-testid="client-reach">
      The client will reach the gateway{' '}
      {r.kind === 'http' ? (
        <>
          over Streamable HTTP at <code>{r.url}</code>
        </>
      ) : (
        <>
          through the <code>{r.command} mcp</code> bridge to <code>{r.url}</code>
        </>
      )}{' '}
      with its own agent key <code>{plan.agent}</code> (entry <code>{plan.entry.name}</code>).
    </p>
  );
}

function ClientRow({ c, onChange }: { c: ClientInfo; onChange: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [confirmUndo, setConfirmUndo] = useState(false);
  const plan = isPlan(c.plan) ? c.plan : null;
  const act = async (what: 'connect' | 'undo') => {
    setBusy(true);
    setError(null);
    setNote(null);
    try {
      if (what === 'connect') {
        const r = await clients.connect(c.client);
        const n = r.started.length;
        setNote(
          n > 0
            ? `Connected: ${n} server${n === 1 ? '' : 's'} added to the gateway and started (${r.started.join(', ')}); they wait in the inbox for review. Restart ${c.name} to reach the gateway.`
            : `Connected. Restart ${c.name} to reach the gateway.`,
        );
        toast(`${c.name} connected`, 'ok');
      } else {
        const r = await clients.undo(c.client);
        const still = r.servers_still_running ?? [];
        setNote(
          `${r.file} restored${r.merged ? ' (connect’s edit undone)' : ', byte for byte'}.` +
            (r.servers_stopped?.length ? ` Stopped: ${r.servers_stopped.join(', ')}.` : '') +
            (still.length ? ` Still running, pending: ${still.map((s) => s.name).join(', ')} — remove them on their page.` : ''),
        );
        toast(`${c.name}: connect undone`, 'info');
      }
      onChange();
    } catch (e) {
      // Cancelled in the app's dialog: nothing changed, nothing to report.
      if (desktopErrorCode(e) !== 'cancelled') setError(desktopErrorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const owner = canChangeClients();
  return (
    <div class="client" data-testid="client" data-client={c.client} data-found={String(c.found)}>
      <div class="card-head">
        <h3>{c.name}</h3>
        <code class="faint ellipsis" title={c.file} style={{ fontSize: '12px' }}>
          {c.file}
        </code>
        <span class="right row-gap" style={{ marginLeft: 'auto', flexWrap: 'nowrap' }}>
          {!c.found ? (
            <span class="status" data-testid="client-state">NOT FOUND</span>
          ) : c.undoable && !plan?.changes_anything ? (
            <span class="status s-APPROVED" data-testid="client-state">CONNECTED</span>
          ) : null}
          {owner && c.undoable && (
            <button class="btn small" disabled={busy} onClick={() => setConfirmUndo(true)} data-testid="client-undo">
              Undo
            </button>
          )}
          {owner && c.found && (
            <button
              class="btn small primary"
              disabled={busy || !plan?.changes_anything}
              onClick={() => void act('connect')}
              data-testid="client-connect"
            >
              Connect
            </button>
          )}
        </span>
      </div>
      {c.found && c.plan && !plan && (
        <div class="error-box" role="alert" style={{ margin: '8px 16px' }}>
          <Ticked text={(c.plan as { error: string }).error} />
        </div>
      )}
      {plan && plan.servers.length > 0 && (
        <table class="kv-table" data-testid="client-preview">
          <tbody>
            {plan.servers.map((s) => (
              <ServerLine key={s.name} s={s} />
            ))}
          </tbody>
        </table>
      )}
      {plan && plan.changes_anything && <Reach plan={plan} />}
      {!owner && c.found && (plan?.changes_anything || c.undoable) && (
        <p class="muted" style={{ margin: '8px 16px' }} data-testid="client-owner-command">
          {plan?.changes_anything
            ? "Connecting starts these servers as this machine's user"
            : "Undoing removes the servers connect started, by a decision signed with this machine's key"}
          , so only its owner does it: run{' '}
          <code>{ownerCommand(c.client, plan?.changes_anything ? 'connect' : 'undo')}</code> in a terminal there, or use
          the desktop app.
        </p>
      )}
      <RowOutcome note={note} error={error} testid="client" />
      {confirmUndo && (
        <ConfirmDialog
          title={`Undo the connect of ${c.name}?`}
          confirm="Undo"
          onClose={() => setConfirmUndo(false)}
          onConfirm={() => {
            setConfirmUndo(false);
            void act('undo');
          }}
        >
          Its file is restored as it was before, byte for byte; the servers it added leave the gateway config and are
          stopped (a removal signed with this machine's approver key), their keychain secrets are deleted and its agent
          key is revoked. The app asks you once more in its own dialog.
        </ConfirmDialog>
      )}
    </div>
  );
}

/** Settings' (and the first run's) "Connect a client". */
export function ConnectClients({ onlyFound = false, title = 'Connect a client' }: { onlyFound?: boolean; title?: string }) {
  const list = useResource(() => clients.list(), []);
  if (list.error && (list.error as { code?: string }).code === 'not_available') return null;
  const shown = (list.data?.clients ?? []).filter((c) => !onlyFound || c.found);
  return (
    <div class="card connect-clients" data-testid="connect-clients">
      <div class="card-head">
        <h3>{title}</h3>
        <span class="faint" style={{ marginLeft: 'auto' }}>
          its MCP servers behind the gateway, pending your review
        </span>
      </div>
      {list.error ? (
        <div class="error-box" role="alert" style={{ margin: '12px 16px' }}>
          {list.error.message}
        </div>
      ) : !list.data ? (
        <SkeletonBlock lines={4} />
      ) : shown.length === 0 ? (
        <p class="muted" style={{ margin: '12px 16px' }}>
          No AI client found for this user (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex CLI, Gemini CLI).
        </p>
      ) : (
        shown.map((c) => <ClientRow key={c.client} c={c} onChange={() => list.reload()} />)
      )}
    </div>
  );
}
