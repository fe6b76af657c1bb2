import type { LaunchView } from '../lib/api';
import { Icon } from './ui';

/** A launch member for a person: args as one command line, env as names. */
function show(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(' ');
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

function paths(list: string[] | undefined, none: string) {
  if (!list?.length) return <span class="muted">{none}</span>;
  return (
    <ul class="paths">
      {list.map((p) => (
        <li class="mono">{p}</li>
      ))}
    </ul>
  );
}

/**
 * How a `command` server is started and what its sandbox grants it (issue 38):
 * the command line in full (what an approval pins), a warning when it runs
 * unconfined, and, when it changed since approval, each changed member before
 * and after.
 */
export function LaunchPanel({ launch }: { launch: LaunchView | null | undefined }) {
  if (!launch) return null;
  const now = launch.pinned ?? {};
  const before = launch.approved ?? null;
  const g = launch.grants;
  return (
    <>
      <div class="section-title">Launch and sandbox</div>
      {launch.sandbox_off && (
        <div class="banner bad" role="alert" data-testid="sandbox-off">
          <Icon name="alert" />
          <div>
            <b>Sandbox off: this program runs unconfined, as the gateway’s own user</b>
            <span>
              It can read the gateway’s data and keys and act as you on this machine. <code>sandbox = "off"</code> is
              pinned with its launch, so approving records that you accepted it.
            </span>
          </div>
        </div>
      )}
      {launch.changed.length > 0 && before && (
        <div class="banner warn" data-testid="launch-changed">
          <Icon name="alert" />
          <div>
            <b>How it is started changed since it was approved: {launch.changed.join(', ')}</b>
            <span>It is not served on the old approval. Approving adopts the launch below.</span>
          </div>
        </div>
      )}
      <div class="card facts launch" data-testid="launch">
        <div style={{ gridColumn: '1 / -1' }}>
          <dt>Command line (pinned with the surface)</dt>
          <dd class="mono wrap" data-testid="launch-command">
            {show(now.command)} {show(now.args)}
          </dd>
        </div>
        {launch.changed.length > 0 && before && (
          <div style={{ gridColumn: '1 / -1' }}>
            <dt>Changed since approval</dt>
            <dd>
              <table class="launch-diff">
                <tbody>
                  {launch.changed.map((k) => (
                    <tr>
                      <th>{k}</th>
                      <td class="mono del">{show(before[k])}</td>
                      <td class="mono add">{show(now[k])}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </dd>
          </div>
        )}
        <div>
          <dt>Environment variables (names; values are never shown or pinned)</dt>
          <dd class="mono wrap">{Array.isArray(now.env) && now.env.length ? now.env.join(', ') : <span class="muted">none</span>}</dd>
        </div>
        <div>
          <dt>Sandbox</dt>
          <dd data-testid="sandbox-state">
            {launch.sandbox_off ? (
              <span class="chip act-quarantine">off: unconfined</span>
            ) : g && 'error' in g ? (
              <span class="chip act-quarantine">will not start: {g.error}</span>
            ) : (
              <span class="chip">
                sandboxed · {g?.net === 'none' || !g?.net ? 'no network' : `network: ${(g.net as string[]).join(', ')}`}
              </span>
            )}
          </dd>
        </div>
        {g && !('error' in g) && (
          <>
            <div>
              <dt>May read (besides the system’s directories)</dt>
              <dd data-testid="sandbox-read">{paths(g.read, 'nothing else')}</dd>
            </div>
            <div>
              <dt>May write (besides its own state directory)</dt>
              <dd data-testid="sandbox-write">{paths(g.write, 'nothing else')}</dd>
            </div>
            <div style={{ gridColumn: '1 / -1' }}>
              <dt>Limits per process</dt>
              <dd class="muted">
                memory {g.limits.memory_mb} MiB · open files {g.limits.open_files} · file size {g.limits.file_size_mb} MiB
                {g.limits.cpu_secs ? ` · CPU ${g.limits.cpu_secs} s` : ''}
                {g.limits.processes ? ` · processes ${g.limits.processes}` : ''}
              </dd>
            </div>
          </>
        )}
      </div>
    </>
  );
}
