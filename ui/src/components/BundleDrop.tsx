// Verify a receipts bundle dropped on the window (or chosen with the file
// picker), in this browser: lib/bundle.ts runs the checks of `interlock
// receipts verify` with WebCrypto, against the log key the auditor pins and,
// optionally, the witnesses it trusts (`--witness`, `--min-witnesses`).

import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { verifyBundle, type BundleReport } from '../lib/bundle';
import { fullTime } from '../lib/hooks';

/** The witness keys typed (one per line, blank lines and `#` comments skipped). */
export function witnessKeys(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

interface Result {
  name: string;
  report: BundleReport;
  ms: number;
}

export function BundleDrop() {
  const [pinned, setPinned] = useState('');
  const [witnesses, setWitnesses] = useState('');
  const [minWitnesses, setMinWitnesses] = useState('');
  const [over, setOver] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The log key this gateway signs with, as a starting point: an auditor who
  // holds the key from elsewhere pastes that one instead.
  useEffect(() => {
    void api.checkpoint().then(
      (c) => setPinned((p) => p || c.verifier_key),
      () => undefined,
    );
  }, []);
  const check = async (file: File) => {
    setBusy(file.name);
    setError(null);
    setResult(null);
    try {
      const text = new TextDecoder('utf-8', { fatal: true }).decode(await file.arrayBuffer());
      const t = performance.now();
      const keys = witnessKeys(witnesses);
      const k = keys.length ? Number(minWitnesses || '0') : 0;
      if (!Number.isSafeInteger(k) || k < 0) throw new Error('“Require at least” is not a whole number');
      const report = await verifyBundle(text, { pinnedLogKey: pinned.trim() || undefined, witnesses: keys, minWitnesses: k });
      setResult({ name: file.name, report, ms: performance.now() - t });
    } catch (e) {
      setError(`${file.name}: ${(e as Error).message}`);
    } finally {
      setBusy(null);
    }
  };
  // The drop handler reads the fields as they are now, not as they were when it was registered.
  const current = useRef(check);
  current.current = check;
  // The whole window takes the drop while this view is open.
  useEffect(() => {
    const onOver = (e: DragEvent) => {
      if (!e.dataTransfer?.types.includes('Files')) return;
      e.preventDefault();
      setOver(true);
    };
    const onLeave = (e: DragEvent) => {
      if (e.relatedTarget === null) setOver(false);
    };
    const onDrop = (e: DragEvent) => {
      const f = e.dataTransfer?.files?.[0];
      if (!f) return;
      e.preventDefault();
      setOver(false);
      void current.current(f);
    };
    document.addEventListener('dragover', onOver);
    document.addEventListener('dragleave', onLeave);
    document.addEventListener('drop', onDrop);
    return () => {
      document.removeEventListener('dragover', onOver);
      document.removeEventListener('dragleave', onLeave);
      document.removeEventListener('drop', onDrop);
    };
  }, []);
  const r = result?.report;
  const failed = r ? r.receipts.filter((l) => l.error) : [];
  return (
    <div class={`card drop${over ? ' over' : ''}`} data-testid="bundle-drop">
      <div class="card-head">
        <h3>Verify a bundle</h3>
        <span class="right muted" style={{ fontSize: '12px' }}>
          in this browser
        </span>
      </div>
      <div class="card-body">
        <p class="help" style={{ marginTop: 0 }}>
          Drop a <code>bundle.json</code> anywhere on the window, or choose it. Every signature, inclusion and range proof and checkpoint is
          checked here, as <code>interlock receipts verify</code> checks it.
        </p>
        <label class="field">
          <span>Log key you trust</span>
          <input type="text" class="mono" style={{ fontWeight: 400, fontSize: '12px' }} value={pinned} onInput={(e) => setPinned((e.target as HTMLInputElement).value)} data-testid="pinned-key" spellcheck={false} />
        </label>
        <div class="witness-fields field">
          <label>
            <span>
              Witness keys you trust <span class="faint">(optional, one per line)</span>
            </span>
            <textarea
              class="mono"
              rows={3}
              wrap="off"
              value={witnesses}
              placeholder="w1.example/witness+1a2b3c4d+BK…"
              onInput={(e) => setWitnesses((e.target as HTMLTextAreaElement).value)}
              onBlur={(e) => ((e.target as HTMLTextAreaElement).scrollLeft = 0)}
              data-testid="witness-keys"
              spellcheck={false}
            />
          </label>
          <label>
            <span>Require at least</span>
            <input
              type="number"
              min={0}
              step={1}
              inputMode="numeric"
              value={minWitnesses}
              placeholder="0"
              disabled={witnessKeys(witnesses).length === 0}
              onInput={(e) => setMinWitnesses((e.target as HTMLInputElement).value)}
              data-testid="min-witnesses"
            />
            <span class="help" style={{ display: 'block' }}>
              of them must have cosigned
            </span>
          </label>
        </div>
        <input
          type="file"
          accept=".json,application/json"
          data-testid="bundle-file"
          onChange={(e) => {
            const f = (e.target as HTMLInputElement).files?.[0];
            if (f) void check(f);
          }}
        />
        {busy && <div class="verify pending">Verifying {busy}…</div>}
        {error && <div class="verify bad">{error}</div>}
        {r && result && (
          <div data-testid="bundle-result" data-ok={String(r.ok)}>
            <div class={`verify ${r.ok ? 'ok' : 'bad'}`}>
              <b>{r.ok ? '✓ Verified' : '✗ Does not verify'}</b>
              <span data-testid="bundle-counts">
                {r.receipts.length} receipts, {failed.length} failed, {r.problems.length} bundle problems
              </span>
            </div>
            <div class="faint" style={{ fontSize: '12px', marginTop: '6px' }}>
              {result.name} · {r.version} · log {r.origin} · checkpoint size {r.tree_size ?? 'not verified'} · {(result.ms / 1000).toFixed(2)} s
            </div>
            {(r.witnesses.length > 0 || r.other_cosigners.length > 0) && (
              <ul class="witness-verdicts" data-testid="bundle-witnesses">
                {r.witnesses.map((w) => (
                  <li data-testid="bundle-witness" data-name={w.name} data-verdict={w.verdict.kind} title={w.vkey}>
                    <b class={w.verdict.kind === 'cosigned' ? 'ok' : w.verdict.kind === 'invalid' ? 'bad' : 'faint'}>
                      {w.verdict.kind === 'cosigned' ? '✓' : w.verdict.kind === 'invalid' ? '✗' : '–'}
                    </b>
                    <span class="mono">{w.name}</span>
                    <span class={w.verdict.kind === 'invalid' ? 'bad' : 'muted'}>
                      {w.verdict.kind === 'cosigned'
                        ? `cosigned at ${fullTime(Number(w.verdict.timestamp))}`
                        : w.verdict.kind === 'invalid'
                          ? `invalid: ${w.verdict.reason}`
                          : 'no cosignature'}
                    </span>
                  </li>
                ))}
                {r.other_cosigners.map((name) => (
                  <li data-testid="bundle-witness" data-name={name} data-verdict={r.witnesses.length ? 'unknown' : 'unchecked'}>
                    <b class={r.witnesses.length ? 'bad' : 'faint'}>{r.witnesses.length ? '✗' : '?'}</b>
                    <span class="mono">{name}</span>
                    <span class={r.witnesses.length ? 'bad' : 'muted'}>
                      {r.witnesses.length ? 'cosigned, but its key was not given: pass it, or the line was altered' : 'cosigned (its key was not given: not checked)'}
                    </span>
                  </li>
                ))}
                {r.witnesses.length > 0 && (
                  <li class="faint" data-testid="bundle-witness-count">
                    {r.witnesses_have} of {r.witnesses.length} witnesses given cosigned the latest checkpoint
                    {r.witnesses_need > 0 ? `; at least ${r.witnesses_need} required` : ''}
                  </li>
                )}
              </ul>
            )}
            {r.unchecked_surfaces > 0 && (
              <div class="verify pending" style={{ marginTop: '6px' }}>
                {r.unchecked_surfaces} approved surfaces carried: check them with <code>interlock receipts verify</code>.
              </div>
            )}
            {(r.problems.length > 0 || failed.length > 0) && (
              <ul class="problems" data-testid="bundle-problems">
                {r.problems.map((p) => (
                  <li>
                    <b>bundle</b> <span class="chip">{p.name}</span> {p.message}
                  </li>
                ))}
                {failed.slice(0, 50).map((l) => (
                  <li>
                    <b>#{l.index}</b> {l.kind} <span class="chip">{l.error!.name}</span> {l.error!.message}
                  </li>
                ))}
                {failed.length > 50 && <li class="faint">… and {failed.length - 50} more receipts</li>}
              </ul>
            )}
          </div>
        )}
      </div>
    </div>
  );
}
