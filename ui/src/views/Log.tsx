import { useEffect, useState } from 'preact/hooks';
import { api, type LogEntry } from '../lib/api';
import { useListNav, useLive, useResource, useTick, ago, fullTime } from '../lib/hooks';
import { verifyCheckpoint, type CheckpointVerification } from '../lib/note';
import { leafHash, verifyInclusion } from '../lib/proof';
import { fromBase64, toHex } from '../lib/statement';
import { ErrorBanner, Hash, pretty, SkeletonBlock, SkeletonRows, Empty } from '../components/ui';
import { ClaimsPanel } from '../components/Claims';
import { WitnessesPanel } from '../components/Witnesses';
import { decodeEnvelopes } from '../lib/dsse';
import { revealOnNarrow } from '../lib/narrow';
import { annotateTimes } from '../lib/receipt';

const PAGE = 100;

/** One line about a log entry, by its type. */
export function subject(e: LogEntry['entry']): string {
  const s = (k: string) => (typeof e[k] === 'string' ? (e[k] as string) : typeof e[k] === 'number' ? String(e[k]) : '');
  const q = (k: string) => (s(k) ? ` “${s(k)}”` : '');
  switch (e.type) {
    case 'plan.proposed':
      return `plan ${s('plan_id')} r${s('revision')} · ${s('title')} · ${s('risk')} risk · by ${s('proposer')}`;
    case 'plan.decision':
      return `${s('decision')} plan ${s('plan_id')} r${s('revision')} · by ${s('approver')}${q('reason')}`;
    case 'plan.transition':
      return `plan ${s('plan_id')} r${s('revision')}: ${s('from')} → ${s('to')}${q('reason')}`;
    case 'tool.call':
      return `${s('agent')} called ${s('server')} ${s('tool')} → ${s('outcome')}`;
    case 'prompt.get':
      return `${s('agent')} got prompt ${s('server')} ${s('prompt')} → ${s('outcome')}`;
    case 'resource.read':
      return `${s('agent')} read ${s('server')} ${s('uri')} → ${s('outcome')}`;
    case 'completion.complete':
      return `${s('agent')} asked completions of ${s('server')} ${s('ref')} → ${s('outcome')}`;
    case 'approver.registered':
      return `${s('identity')} · ${s('key_id').slice(0, 24)}… · ${s('label')}`;
    case 'standing.granted': {
      const d = (e.document ?? {}) as Record<string, unknown>;
      return `${String(d.role ?? '?')} → ${String(d.tool ?? '?')} without review · by ${s('approver')}${q('reason')}`;
    }
    case 'standing.revoked':
      return `${s('id')} · by ${s('by')}${q('reason')}`;
    case 'tool.approved':
      return `tool ${s('server')}/${s('tool')} definition approved · by ${s('approver')}${q('reason')}`;
    case 'tool.blocked':
      return `tool ${s('server')}/${s('tool')} blocked · by ${s('approver')}${q('reason')}`;
    case 'apikey.issued':
      return `${s('kind')} key for ${s('name')}${s('role') ? ` (${s('role')})` : ''}`;
  }
  if (e.type?.startsWith('server.')) {
    const drift = Array.isArray(e.drift) ? e.drift.length : 0;
    return [
      `server ${s('server')}${s('status') ? ` → ${s('status')}` : ''}`,
      drift ? `${drift} drift${drift > 1 ? 's' : ''}` : '',
      s('approver') ? `by ${s('approver')}${q('reason')}` : q('reason').trim(),
      !s('status') && s('surface_hash') ? `surface ${s('surface_hash').slice(7, 19)}` : '',
    ]
      .filter(Boolean)
      .join(' · ');
  }
  const bits = ['plan_id', 'server', 'tool', 'title', 'decision', 'status', 'reason'].map(s).filter(Boolean);
  return bits.join(' · ') || Object.keys(e).filter((k) => k !== 'type' && k !== 'time' && k !== 'seq').join(', ');
}

interface Inclusion {
  ok: boolean;
  message: string;
  receipt?: string;
}

/**
 * Checks in this browser that entry `index` is in the log the log key signed:
 * the checkpoint note's signature (with the log's verifier key), then the
 * stored leaf's RFC 6962 inclusion proof against that note's root. Nothing
 * the gateway says is taken on trust beyond the verifier key.
 */
async function checkInclusion(index: number, verifierKey: string): Promise<Inclusion> {
  const p = await api.logProof(index);
  const note = await verifyCheckpoint(p.note, verifierKey, { size: p.size, root: p.root });
  if (!note.ok) return { ok: false, message: note.message };
  if (note.size !== p.size || note.rootHex !== p.root.toLowerCase())
    return { ok: false, message: 'The proof is not against the signed checkpoint.' };
  const leaf = fromBase64(p.leaf);
  const lh = await leafHash(leaf);
  if (toHex(lh) !== p.leaf_hash.toLowerCase()) return { ok: false, message: 'The leaf does not hash to what the gateway says.' };
  const ok = await verifyInclusion(index, p.size, lh, p.proof.map((h) => fromHexBytes(h)), fromHexBytes(p.root));
  let receipt: string | undefined;
  try {
    // A statement leaf has no signature of its own: the checkpoint vouches for
    // it. An older log's leaf is a DSSE envelope signed by the log key.
    const doc = JSON.parse(new TextDecoder().decode(leaf)) as {
      _type?: string;
      payloadType?: string;
      signatures?: unknown[];
    };
    receipt =
      doc._type !== undefined
        ? `${doc._type} · vouched for by the signed checkpoint`
        : `${doc.payloadType ?? '?'} · ${doc.signatures?.length ?? 0} signature(s)`;
  } catch {
    receipt = undefined;
  }
  return ok
    ? {
        ok: true,
        message: `In the checkpoint of ${p.size} entries signed by ${note.origin} (proof of ${p.proof.length} hashes, verified in this browser).`,
        receipt,
      }
    : { ok: false, message: 'The inclusion proof does not lead to the signed root.' };
}

function fromHexBytes(h: string): Uint8Array {
  if (!/^([0-9a-f]{2})*$/i.test(h)) return new Uint8Array();
  return new Uint8Array(h.match(/../g)?.map((x) => parseInt(x, 16)) ?? []);
}

export function Log() {
  useTick();
  const cp = useResource(() => api.checkpoint(), []);
  const [older, setOlder] = useState<LogEntry[]>([]);
  const page = useResource(() => api.log(undefined, PAGE), []);
  useLive(() => true, () => {
    cp.reload();
    page.reload();
  });
  const [ver, setVer] = useState<CheckpointVerification | null>(null);
  useEffect(() => {
    if (!cp.data) return;
    setVer(null);
    void verifyCheckpoint(cp.data.note, cp.data.verifier_key, cp.data).then(setVer, (e: Error) =>
      setVer({ ok: false, message: e.message }),
    );
  }, [cp.data]);
  const entries = [...(page.data?.entries ?? []), ...older].sort((a, b) => b.index - a.index);
  const dedup = entries.filter((e, i) => i === 0 || entries[i - 1].index !== e.index);
  const keys = dedup.map((e) => String(e.index));
  const nav = useListNav(keys, () => undefined);
  const selected = dedup.find((e) => String(e.index) === nav.selected);
  const lowest = dedup.length ? dedup[dedup.length - 1].index : 0;
  const [inclusion, setInclusion] = useState<{ index: number; v: Inclusion } | null>(null);
  const verifierKey = cp.data?.verifier_key;
  useEffect(() => {
    if (!selected || !verifierKey) return;
    let live = true;
    const index = selected.index;
    void checkInclusion(index, verifierKey).then(
      (v) => live && setInclusion({ index, v }),
      (e: Error) => live && setInclusion({ index, v: { ok: false, message: e.message } }),
    );
    return () => {
      live = false;
    };
  }, [selected?.index, verifierKey, cp.data?.size]);
  const inc = selected && inclusion?.index === selected.index ? inclusion.v : null;
  const loadOlder = async () => {
    const from = Math.max(0, lowest - PAGE);
    const more = await api.log(from, lowest - from);
    setOlder((o) => [...o, ...more.entries]);
  };
  return (
    <div class="page">
      <div class="page-head">
        <div>
          <h1>Log</h1>
          <div class="sub">Every proposal, decision, drift and tool call, as leaves of a signed Merkle log.</div>
        </div>
      </div>
      {(cp.error || page.error) && <ErrorBanner error={(cp.error || page.error)!} onRetry={() => (cp.reload(), page.reload())} />}
      <div class="card" data-testid="checkpoint">
        <div class="card-head">
          <h3>Latest checkpoint</h3>
          <span class="right muted" style={{ fontSize: '12.5px' }}>
            signed tree head (C2SP signed note)
          </span>
        </div>
        {!cp.data ? (
          <SkeletonBlock lines={3} />
        ) : (
          <div class="card-body">
            <div class="stat-row">
              <div class="stat">
                <div class="l">Checkpoint size</div>
                <div class="v" data-testid="checkpoint-size">
                  {ver?.size ?? cp.data.size}
                </div>
              </div>
              <div class="stat">
                <div class="l">Root</div>
                <div class="mono" style={{ marginTop: '6px', wordBreak: 'break-all' }} data-testid="checkpoint-root">
                  {ver?.rootHex ?? cp.data.root}
                </div>
              </div>
            </div>
            <div
              class={`verify ${ver === null ? 'pending' : ver.ok ? 'ok' : 'bad'}`}
              data-testid="checkpoint-verify"
              data-ok={ver === null ? '' : String(ver.ok)}
            >
              <b>{ver === null ? '…' : ver.ok ? '✓ Verified' : '✗ Not verified'}</b>
              <span>{ver === null ? 'Checking the signature…' : ver.message}</span>
            </div>
            <div class="stage-grid">
              <div>
                <div class="sub-h">Note</div>
                <pre class="block" style={{ fontSize: '11.5px' }}>{cp.data.note ?? 'none yet'}</pre>
              </div>
              <div>
                <div class="sub-h">Log verifier key</div>
                <Hash value={cp.data.verifier_key} />
                <div class="help">
                  Offline: <code>interlock audit verify</code> rebuilds the tree from every leaf.
                </div>
              </div>
            </div>
          </div>
        )}
      </div>
      <div class="section-title">Witnesses</div>
      <WitnessesPanel logKey={cp.data?.verifier_key} logSize={cp.data?.size} />
      <div class="section-title">The auditor’s claim</div>
      <ClaimsPanel logSize={page.data?.size} />
      <div class="section-title">
        Entries {page.data && <span class="faint">({page.data.size} in all)</span>}
      </div>
      <div class="log-grid">
        <div class="list" data-testid="log-entries">
          {!page.data ? (
            <SkeletonRows n={8} cols={1} />
          ) : dedup.length === 0 ? (
            <Empty title="The log is empty" />
          ) : (
            <>
              {dedup.map((e) => (
                <div
                  class={`row log-row${nav.selected === String(e.index) ? ' selected' : ''}`}
                  data-key={String(e.index)}
                  data-testid="log-row"
                  onClick={() => {
                    nav.select(String(e.index));
                    revealOnNarrow('log-entry-pane');
                  }}
                >
                  <span class="idx">#{e.index}</span>
                  <span class="type">
                    <span class="chip">{e.entry.type ?? '?'}</span>
                  </span>
                  <span class="subj">{subject(e.entry)}</span>
                  <span class="time" title={fullTime(e.entry.time)}>
                    {ago(e.entry.time)}
                  </span>
                </div>
              ))}
              {lowest > 0 && (
                <div class="row" style={{ justifyContent: 'center', cursor: 'default' }}>
                  <button class="btn small" onClick={() => void loadOlder()}>
                    Load older entries
                  </button>
                </div>
              )}
            </>
          )}
        </div>
        <div class="card aside" style={{ gap: 0 }} id="log-entry-pane">
          <div class="card-head">
            <h3>{selected ? `Entry #${selected.index}` : 'Entry'}</h3>
            <span class="right muted" style={{ fontSize: '12px' }}>
              <kbd>j</kbd> <kbd>k</kbd>
            </span>
          </div>
          <div class="card-body">
            {selected ? (
              <>
                <div
                  class={`verify ${inc === null ? 'pending' : inc.ok ? 'ok' : 'bad'}`}
                  data-testid="inclusion"
                  data-ok={inc === null ? '' : String(inc.ok)}
                  style={{ marginTop: 0, marginBottom: '12px', flexWrap: 'wrap', alignItems: 'baseline' }}
                >
                  <b>{inc === null ? '…' : inc.ok ? '✓ In the signed log' : '✗ Not verified'}</b>
                  <span>{inc === null ? 'Checking its inclusion proof…' : inc.message}</span>
                  {inc?.receipt && <span class="faint">Receipt: {inc.receipt}</span>}
                </div>
                <pre class="block" style={{ maxHeight: '60vh' }} data-testid="log-entry">
                  {annotateTimes(pretty(decodeEnvelopes(selected.entry)))}
                </pre>
              </>
            ) : (
              <div class="none">Select an entry.</div>
            )}
          </div>
        </div>
      </div>
    </div>
  );
}
