// The receipts view (issue 18 item 1): find receipts across the whole log by
// time, plan, server, agent, tool and event type (filtered and paged by the
// gateway's store), read each one decoded, open its statement, stored leaf and
// approver's envelope, download it as a C2SP tlog-proof, export the filtered
// set as a bundle, and verify a bundle dropped on the window in this browser.

import { Fragment } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, type Approver, type Receipt, type ReceiptFilters, type ReceiptsExport } from '../lib/api';
import { ago, useListNav, useTick } from '../lib/hooks';
import {
  annotateTimes,
  approverNames,
  decider,
  groupReceipts,
  rowText,
  shortKey,
  subjectOf,
  verdictOf,
  whatOf,
  whyOf,
  zonedTime,
  type ReceiptGroup,
} from '../lib/receipt';
import { fromBase64 } from '../lib/statement';
import { download } from '../lib/download';
import { decodeEnvelopes, envelopeView } from '../lib/dsse';
import { Empty, ErrorBanner, Hash, pretty, SkeletonRows } from '../components/ui';
import { BundleDrop } from '../components/BundleDrop';
import { revealOnNarrow } from '../lib/narrow';

const PAGE = 100;

/** Event types a reviewer filters by (the log's leaf types). */
export const EVENT_TYPES = [
  'tool.call',
  'tool.call.intent',
  'hook.call',
  'llm.call',
  'llm.response',
  'plan.proposed',
  'plan.approved',
  'plan.rejected',
  'plan.decision',
  'plan.transition',
  'server.requested',
  'server.added',
  'server.removed',
  'server.pending',
  'server.approved',
  'server.rejected',
  'server.quarantined',
  'server.drift_held',
  'server.drift',
  'server.probe_drift',
  'server.probe_call',
  'tool.approved',
  'tool.blocked',
  'standing.granted',
  'standing.revoked',
  'tool.envelope_fixed',
  'tool.envelope_widened',
  'prompt.get',
  'resource.read',
  'completion.complete',
  'approver.registered',
  'apikey.issued',
  'admin.action',
  'signin.issued',
  'signin.redeemed',
  'client.change.intent',
  'client.connected',
  'client.undone',
  'client.hooks_installed',
  'client.hooks_undone',
  'client.change_refused',
];

type Preset = 'today' | '7d' | '30d' | 'all' | 'custom';
const PRESETS: [Preset, string][] = [
  ['today', 'Today'],
  ['7d', '7 days'],
  ['30d', '30 days'],
  ['all', 'All time'],
  ['custom', 'Custom'],
];

/** The [from, to) Unix-seconds range of a preset, at `now` (ms). */
export function presetRange(p: Preset, now = Date.now()): { from?: number; to?: number } {
  const midnight = new Date(now);
  midnight.setHours(0, 0, 0, 0);
  const day = 86_400;
  switch (p) {
    case 'today':
      return { from: Math.floor(midnight.getTime() / 1000) };
    case '7d':
      return { from: Math.floor(now / 1000) - 7 * day };
    case '30d':
      return { from: Math.floor(now / 1000) - 30 * day };
    default:
      return {};
  }
}

/** `<input type="datetime-local">` value → Unix seconds (local time), or undefined. */
function localToUnix(v: string): number | undefined {
  if (!v) return undefined;
  const t = new Date(v).getTime();
  return Number.isFinite(t) ? Math.floor(t / 1000) : undefined;
}

function toneClass(r: Receipt): string {
  return `tone-${verdictOf(r).tone}`;
}

type Raw = 'statement' | 'leaf' | 'envelope';

function Detail({ r, names }: { r: Receipt; names: Map<string, string> }) {
  const [raw, setRaw] = useState<Raw | null>(null);
  const [leaf, setLeaf] = useState<{ index: number; text: string } | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setRaw(null);
    setErr(null);
  }, [r.index]);
  // A plan decision keeps its approver's envelope as `statement`, a server
  // or tool decision as `envelope`.
  const approval = r.predicate?.statement ?? r.predicate?.envelope;
  const showLeaf = async () => {
    setRaw('leaf');
    if (leaf?.index === r.index) return;
    try {
      const p = await api.logProof(r.index);
      const bytes = fromBase64(p.leaf);
      let text = new TextDecoder().decode(bytes);
      try {
        const doc = JSON.parse(text) as Record<string, unknown>;
        // An older log's leaf is a DSSE envelope: show its payload decoded.
        text = pretty(decodeEnvelopes(doc));
      } catch {
        /* not JSON: show as stored */
      }
      setLeaf({ index: r.index, text });
    } catch (e) {
      setErr((e as Error).message);
    }
  };
  const tlog = async () => {
    setBusy(true);
    setErr(null);
    try {
      download(`receipt-${r.index}.tlog-proof`, await api.tlogProof(r.index), 'text/plain');
    } catch (e) {
      setErr((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const findings = Array.isArray(r.findings) ? r.findings : [];
  const verdict = verdictOf(r);
  const who = decider(r, names);
  const why = whyOf(r);
  const subject = subjectOf(r);
  return (
    <div class="card-body receipt-detail" data-testid="receipt-detail">
      <dl class="kv">
        <dt>Verdict</dt>
        <dd data-testid="receipt-verdict">
          <span class={`chip verdict ${toneClass(r)}`}>{verdict.text}</span>
          {r.shadow && <span class="faint"> · shadow mode</span>}
        </dd>
        <dt>Decided by</dt>
        <dd data-testid="receipt-approver" title={who.keyId ? `signed with ${who.keyId}` : undefined}>
          {who.name}
          {who.keyId && !who.name.includes(shortKey(who.keyId)) && <span class="faint mono key-id"> · signed with {who.keyId}</span>}
        </dd>
        <dt>What</dt>
        <dd data-testid="receipt-what">{whatOf(r)}</dd>
        {subject && (
          <>
            <dt>Subject</dt>
            <dd data-testid="receipt-subject">{subject}</dd>
          </>
        )}
        <dt>When</dt>
        <dd data-testid="receipt-when">
          {zonedTime(r.time)} <span class="faint">({ago(r.time)})</span>
        </dd>
        <dt>Why</dt>
        <dd data-testid="receipt-why">{why || <span class="faint">no reason recorded</span>}</dd>
        <dt>Event</dt>
        <dd>
          <span class="chip">{r.kind}</span> <span class="faint">#{r.index}</span>
        </dd>
        {r.agent && (
          <>
            <dt>Agent</dt>
            <dd>{r.agent}</dd>
          </>
        )}
        {(r.server || r.tool) && !subject.includes(`${r.server ?? ''}/${r.tool ?? ''}`.replace(/\/$/, '')) && (
          <>
            <dt>Server · tool</dt>
            <dd>{[r.server, r.tool].filter(Boolean).join(' · ')}</dd>
          </>
        )}
        {r.plan_id && !subject.includes(r.plan_id) && (
          <>
            <dt>Plan</dt>
            <dd>{r.plan_id}</dd>
          </>
        )}
        {r.hash && (
          <>
            <dt>On hash</dt>
            <dd data-testid="receipt-hash">
              <span class="faint">{r.hash.name}</span>
              <Hash value={r.hash.value} />
            </dd>
          </>
        )}
        <dt>Findings</dt>
        <dd data-testid="receipt-findings">
          {findings.length === 0 ? (
            <span class="faint">none</span>
          ) : (
            findings.map((f) => {
              const o = f as Record<string, unknown>;
              const label = [o.severity, o.kind ?? o.rule ?? o.id, o.where ?? o.path].filter((x) => typeof x === 'string').join(' · ');
              return <span class="chip finding" title={pretty(f)}>{label || pretty(f).slice(0, 60)}</span>;
            })
          )}
        </dd>
      </dl>
      <div class="raw-tabs" role="group" aria-label="Raw forms">
        <button class={`filter${raw === 'statement' ? ' on' : ''}`} onClick={() => setRaw(raw === 'statement' ? null : 'statement')} data-testid="show-statement">
          Statement
        </button>
        <button class={`filter${raw === 'leaf' ? ' on' : ''}`} onClick={() => (raw === 'leaf' ? setRaw(null) : void showLeaf())} data-testid="show-leaf">
          Stored leaf
        </button>
        {approval !== undefined && (
          <button class={`filter${raw === 'envelope' ? ' on' : ''}`} onClick={() => setRaw(raw === 'envelope' ? null : 'envelope')} data-testid="show-envelope">
            Approver’s envelope
          </button>
        )}
        <button class="btn small" onClick={() => void tlog()} disabled={busy} data-testid="download-tlog-proof" title="This receipt alone, with its inclusion proof and a signed checkpoint (c2sp.org/tlog-proof)">
          ⤓ tlog-proof
        </button>
      </div>
      {err && <div class="verify bad">{err}</div>}
      {raw && (
        <pre class="block raw" data-testid="receipt-raw">
          {raw === 'statement'
            ? annotateTimes(pretty(decodeEnvelopes(r.predicate)))
            : raw === 'envelope'
              ? annotateTimes(pretty(envelopeView(approval)))
              : leaf?.index === r.index
                ? leaf.text
                : 'Loading…'}
        </pre>
      )}
    </div>
  );
}

export function Receipts() {
  useTick();
  const [preset, setPreset] = useState<Preset>(() => (sessionStorage.getItem('interlock.receiptsPreset') as Preset) || '7d');
  const [custom, setCustom] = useState({ from: '', to: '' });
  const [fields, setFields] = useState({ plan: '', server: '', agent: '', tool: '', event: '' });
  // Text fields apply after a pause in typing, so each keystroke is not a query.
  const [applied, setApplied] = useState(fields);
  useEffect(() => {
    const t = setTimeout(() => setApplied(fields), 300);
    return () => clearTimeout(t);
  }, [fields]);
  const filters: ReceiptFilters = useMemo(() => {
    const r =
      preset === 'custom'
        ? { from: localToUnix(custom.from), to: localToUnix(custom.to) }
        : presetRange(preset);
    return {
      from: r.from !== undefined ? String(r.from) : undefined,
      to: r.to !== undefined ? String(r.to) : undefined,
      ...applied,
    };
    // The preset's range is taken when it is chosen, not re-read every tick.
  }, [preset, custom.from, custom.to, applied]);
  const [items, setItems] = useState<Receipt[] | null>(null);
  const [cursor, setCursor] = useState<number | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [loading, setLoading] = useState(false);
  const [reload, setReload] = useState(0);
  const generation = useRef(0);
  useEffect(() => {
    const g = ++generation.current;
    setLoading(true);
    setError(null);
    api.receipts(filters, undefined, PAGE).then(
      (p) => {
        if (g !== generation.current) return;
        setItems(p.receipts);
        setCursor(p.next_cursor);
        setLoading(false);
      },
      (e: Error) => {
        if (g !== generation.current) return;
        setError(e);
        setLoading(false);
      },
    );
  }, [filters, reload]);
  const more = async () => {
    if (cursor === null) return;
    const g = generation.current;
    setLoading(true);
    try {
      const p = await api.receipts(filters, cursor, PAGE);
      if (g !== generation.current) return;
      setItems((old) => [...(old ?? []), ...p.receipts]);
      setCursor(p.next_cursor);
    } catch (e) {
      setError(e as Error);
    } finally {
      setLoading(false);
    }
  };
  const list = items ?? [];
  // Who the key ids are: the registered approvers (and any registrations listed).
  const [approvers, setApprovers] = useState<Approver[]>([]);
  useEffect(() => {
    void api.approvers().then(
      (r) => setApprovers(r.approvers),
      () => undefined,
    );
  }, []);
  const names = useMemo(() => approverNames(approvers, list), [approvers, list]);
  // A tool call's intent and outcome leaves are one row.
  const groups = useMemo(() => groupReceipts(list), [list]);
  const keys = groups.map((g) => g.key);
  const nav = useListNav(keys, () => undefined);
  const group = groups.find((g) => g.key === nav.selected);
  // Which leaf of the selected row is shown (its main receipt unless chosen).
  const [leaf, setLeaf] = useState<{ key: string; index: number } | null>(null);
  const selected = (group && leaf?.key === group.key ? group.leaves.find((l) => l.index === leaf.index) : undefined) ?? group?.main;
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const toggle = (k: string) =>
    setExpanded((old) => {
      const n = new Set(old);
      if (n.has(k)) n.delete(k);
      else n.add(k);
      return n;
    });
  const choose = (g: ReceiptGroup, leaf?: number) => {
    nav.select(g.key);
    setLeaf(leaf === undefined ? null : { key: g.key, index: leaf });
    revealOnNarrow('receipt-pane');
  };
  // Printing one receipt: the list is left out of the printed page.
  const printOne = () => {
    document.body.classList.add('print-one');
    const done = () => {
      document.body.classList.remove('print-one');
      window.removeEventListener('afterprint', done);
    };
    window.addEventListener('afterprint', done);
    window.print();
  };
  const presetLabel = preset === 'custom' ? `${custom.from || '…'} to ${custom.to || '…'} (local time)` : PRESETS.find(([p]) => p === preset)?.[1];
  const filterLine = [
    `Time: ${presetLabel}`,
    ...(Object.entries(applied) as [string, string][]).filter(([, v]) => v).map(([k, v]) => `${k}: ${v}`),
  ].join(' · ');
  const [exported, setExported] = useState<ReceiptsExport | null>(null);
  const [exporting, setExporting] = useState(false);
  const [exportError, setExportError] = useState<string | null>(null);
  const doExport = async () => {
    setExporting(true);
    setExportError(null);
    setExported(null);
    try {
      const x = await api.exportReceipts(filters);
      setExported(x);
      const bundle = x.files.find((f) => f.name === 'bundle.json');
      if (bundle) download('bundle.json', bundle.content, bundle.media_type);
    } catch (e) {
      setExportError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setExporting(false);
    }
  };
  // The configured servers, offered as the server filter's suggestions.
  const [serverNames, setServerNames] = useState<string[]>([]);
  useEffect(() => {
    void api.servers().then(
      (r) => setServerNames(r.servers.map((s) => s.name)),
      () => undefined,
    );
  }, []);
  const set = (k: keyof typeof fields) => (e: Event) => setFields((f) => ({ ...f, [k]: (e.target as HTMLInputElement).value }));
  return (
    <div class="page receipts-page">
      <div class="page-head">
        <div>
          <h1>Receipts</h1>
          <div class="sub">Every decision in the signed log: find, read, export, and verify an exported bundle.</div>
          <div class="print-only print-meta" data-testid="print-meta">
            {filterLine} · {groups.length} rows ({list.length} receipts) · printed {zonedTime(Math.floor(Date.now() / 1000))}
          </div>
        </div>
        <div class="actions receipts-actions" style={{ marginLeft: 'auto' }}>
          <button class="btn" onClick={() => window.print()} data-testid="print" title="Print these receipts as a report (or save them as PDF)">
            Print
          </button>
          <button class="btn primary" onClick={() => void doExport()} disabled={exporting} data-testid="export">
            {exporting ? 'Exporting…' : '⤓ Export these receipts'}
          </button>
        </div>
      </div>
      <div class="filters" role="group" aria-label="Time range" data-testid="time-presets">
        {PRESETS.map(([p, label]) => (
          <button
            class={`filter${p === preset ? ' on' : ''}`}
            data-preset={p}
            onClick={() => {
              sessionStorage.setItem('interlock.receiptsPreset', p);
              setPreset(p);
            }}
          >
            {label}
          </button>
        ))}
        {preset === 'custom' && (
          <span class="custom-range">
            <label>
              From <input type="datetime-local" value={custom.from} onInput={(e) => setCustom((c) => ({ ...c, from: (e.target as HTMLInputElement).value }))} data-testid="custom-from" />
            </label>
            <label>
              to <input type="datetime-local" value={custom.to} onInput={(e) => setCustom((c) => ({ ...c, to: (e.target as HTMLInputElement).value }))} data-testid="custom-to" />
            </label>
          </span>
        )}
      </div>
      <div class="receipt-filters">
        <label>
          Server
          <input type="text" list="receipt-servers" value={fields.server} onInput={set('server')} placeholder="any" data-testid="filter-server" />
          <datalist id="receipt-servers">
            {serverNames.map((n) => (
              <option value={n} />
            ))}
          </datalist>
        </label>
        <label>
          Agent
          <input type="text" value={fields.agent} onInput={set('agent')} placeholder="any" data-testid="filter-agent" />
        </label>
        <label>
          Tool
          <input type="text" value={fields.tool} onInput={set('tool')} placeholder="any" data-testid="filter-tool" />
        </label>
        <label>
          Plan
          <input type="text" value={fields.plan} onInput={set('plan')} placeholder="any" data-testid="filter-plan" />
        </label>
        <label>
          Event
          <select value={fields.event} onChange={set('event')} data-testid="filter-event">
            <option value="">any</option>
            {EVENT_TYPES.map((t) => (
              <option value={t}>{t}</option>
            ))}
          </select>
        </label>
      </div>
      {(exported || exportError) && (
        <div class={`verify ${exportError ? 'bad' : exported?.verified ? 'ok' : 'bad'} export-result`} data-testid="export-result">
          {exportError ? (
            <span>{exportError}</span>
          ) : (
            exported && (
              <>
                <b>{exported.verified ? '✓ Exported' : '✗ Exported, but it does not verify'}</b>
                <span>
                  {exported.receipts} receipts
                  {exported.registrations > 0 &&
                    `, with the ${exported.registrations} approver key registration${exported.registrations === 1 ? '' : 's'} that back${exported.registrations === 1 ? 's' : ''} their signatures`}
                  . Pin the log key when verifying: <code class="mono">{exported.log_key}</code>
                </span>
                <span class="downloads">
                  {exported.files.map((f) => (
                    <button class="btn small" onClick={() => download(f.name, f.content, f.media_type)} data-testid={`download-${f.name}`}>
                      ⤓ {f.name}
                    </button>
                  ))}
                </span>
              </>
            )
          )}
        </div>
      )}
      {error && <ErrorBanner error={error} onRetry={() => setReload((n) => n + 1)} />}
      <div class="log-grid">
        <div class="receipts-col">
          <div class="list receipts-list" data-testid="receipts" aria-busy={loading}>
            {items === null ? (
              <SkeletonRows n={10} cols={1} />
            ) : list.length === 0 ? (
              <Empty title="No receipts match">Widen the time range or clear a filter.</Empty>
            ) : (
              groups.map((g) => {
                const r = g.main;
                const v = verdictOf(r);
                const who = decider(r, names);
                const why = whyOf(r);
                const open = expanded.has(g.key);
                return (
                  <Fragment key={g.key}>
                    <div
                      class={`row log-row receipt-row${nav.selected === g.key ? ' selected' : ''}`}
                      data-key={g.key}
                      data-testid="receipt-row"
                      data-kind={r.kind}
                      data-leaves={g.leaves.map((l) => l.index).join(' ')}
                      title={rowText(g, names)}
                      onClick={() => choose(g)}
                    >
                      <span class="idx">#{r.index}</span>
                      <span class="verdict-col">
                        <span class={`chip verdict tone-${v.tone}`} data-testid="row-verdict">
                          {v.text}
                        </span>
                      </span>
                      <span class="subj">
                        <span class="what" data-testid="row-what">
                          {whatOf(r)}
                        </span>
                        <span class="meta">
                          by <b data-testid="row-who">{who.name}</b> · <span data-testid="row-time">{zonedTime(r.time)}</span>
                          {why && (
                            <>
                              {' · '}
                              <span class="why" data-testid="row-why">
                                “{why}”
                              </span>
                            </>
                          )}
                        </span>
                        <span class="foot">
                          <span class="chip event" data-testid="row-event">
                            {g.leaves.length > 1 ? 'tool call' : r.kind}
                          </span>
                          {g.leaves.length > 1 && (
                            <button
                              class="leaves-toggle"
                              aria-expanded={open}
                              aria-label={`${open ? 'Hide' : 'Show'} the ${g.leaves.length} leaves of this call`}
                              data-testid="row-leaves-toggle"
                              onClick={(e) => {
                                e.stopPropagation();
                                toggle(g.key);
                              }}
                            >
                              {open ? '▾' : '▸'} {g.leaves.length} leaves: intent and outcome
                            </button>
                          )}
                          {g.leaves.length > 1 && (
                            <span class="print-inline faint">leaves {g.leaves.map((l) => `#${l.index} ${l.kind === 'tool.call.intent' ? 'intent' : 'outcome'}`).join(', ')}</span>
                          )}
                          <span class="ago">{ago(r.time)}</span>
                        </span>
                      </span>
                    </div>
                    {open &&
                      g.leaves.map((l) => (
                        <div
                          class={`row log-row leaf-row${nav.selected === g.key && selected?.index === l.index ? ' selected' : ''}`}
                          data-testid="receipt-leaf-row"
                          onClick={() => choose(g, l.index)}
                        >
                          <span class="idx">#{l.index}</span>
                          <span class="chip event">{l.kind}</span>
                          <span class="subj">
                            {l.kind === 'tool.call.intent' ? 'intent: recorded before the call was forwarded' : 'outcome'} · {verdictOf(l).text} ·{' '}
                            {zonedTime(l.time)}
                          </span>
                        </div>
                      ))}
                  </Fragment>
                );
              })
            )}
          </div>
          <div class="list-foot">
            {cursor !== null ? (
              <button class="btn small" onClick={() => void more()} disabled={loading} data-testid="more">
                {loading ? 'Loading…' : `Load ${PAGE} older`}
              </button>
            ) : (
              items !== null && <span class="faint">{list.length} receipts — the end of the selection</span>
            )}
          </div>
        </div>
        <div class="aside">
          <div class="card" style={{ gap: 0 }} id="receipt-pane">
            <div class="card-head">
              <h3>{selected ? `Receipt #${selected.index}` : 'Receipt'}</h3>
              <span class="right muted" style={{ fontSize: '12px' }}>
                {selected && (
                  <button class="btn small" onClick={printOne} data-testid="print-one" title="Print this receipt alone">
                    Print
                  </button>
                )}{' '}
                <kbd>j</kbd> <kbd>k</kbd>
              </span>
            </div>
            {group && group.leaves.length > 1 && (
              <div class="leaf-tabs" role="group" aria-label="This call's leaves" data-testid="leaf-tabs">
                <span class="faint">This call’s leaves:</span>
                {group.leaves.map((l) => (
                  <button class={`filter${selected?.index === l.index ? ' on' : ''}`} onClick={() => setLeaf({ key: group.key, index: l.index })} data-testid="leaf-tab">
                    #{l.index} {l.kind === 'tool.call.intent' ? 'intent' : 'outcome'}
                  </button>
                ))}
              </div>
            )}
            {selected ? <Detail r={selected} names={names} /> : <div class="card-body none">Select a receipt.</div>}
          </div>
          <BundleDrop />
        </div>
      </div>
    </div>
  );
}
