// A REAL gateway cosigned by REAL witnesses (issue 43), for the browser tests:
// `interlock witness serve` processes, each with its own data directory and its
// key in the gateway's keychain service, cosigning the gateway's log; the
// gateway configured with them (`[log] witnesses` in gateway.toml) and restarted,
// as tests/integration/witness.rs does.
//
// Run directly for a witnessed gateway to develop against:
// `INTERLOCK_BIN=… scripts/with-keyring node ui/tests/e2e/witness.mjs`.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Gateway, interlockBin, waitFor } from './harness.mjs';

/** A running `interlock witness serve`. */
export class Witness {
  constructor(gw, name) {
    this.gw = gw;
    this.name = name;
    this.dir = path.join(gw.dir, `witness-${name.replace(/[^a-z0-9]/gi, '_')}`);
  }

  async start(logVkey) {
    fs.mkdirSync(this.dir, { recursive: true });
    const env = { ...this.gw.env };
    delete env.INTERLOCK_DATA_DIR;
    delete env.INTERLOCK_DATABASE_URL;
    this.child = spawn(
      interlockBin(),
      ['--data-dir', this.dir, 'witness', 'serve', '--name', this.name, '--listen', '127.0.0.1:0', '--log', logVkey],
      { env, stdio: ['ignore', 'pipe', fs.openSync(path.join(this.dir, 'witness.log'), 'a')] },
    );
    const lines = [];
    await new Promise((resolve, reject) => {
      const rl = createInterface({ input: this.child.stdout });
      rl.on('line', (l) => (lines.push(l), lines.length === 2 && resolve()));
      this.child.once('exit', (code) => reject(new Error(`witness ${this.name} exited ${code}: ${this.log()}`)));
    });
    this.url = /^interlock witness listening on (\S+)$/.exec(lines[0])?.[1];
    this.vkey = /^witness key: (\S+)$/.exec(lines[1])?.[1];
    if (!this.url || !this.vkey?.startsWith(`${this.name}+`)) throw new Error(`unexpected witness output ${JSON.stringify(lines)}: ${this.log()}`);
    this.child.stdout.resume();
    return this;
  }

  log() {
    try {
      return fs.readFileSync(path.join(this.dir, 'witness.log'), 'utf8');
    } catch {
      return '';
    }
  }

  async stop() {
    if (this.child && this.child.exitCode === null) {
      this.child.kill('SIGTERM');
      await new Promise((r) => {
        const t = setTimeout(() => (this.child.kill('SIGKILL'), r()), 5000);
        this.child.once('exit', () => (clearTimeout(t), r()));
      });
    }
  }
}

/** Exports the gateway's receipts into `out` (replaced) and returns bundle.json's text. */
export async function exportBundle(gw, out) {
  fs.rmSync(out, { recursive: true, force: true });
  await gw.cli('receipts', 'export', out);
  return fs.readFileSync(path.join(out, 'bundle.json'), 'utf8');
}

/**
 * A gateway (harness `Gateway`, started with `servers`) cosigned by witnesses
 * named `names`: returns { gw, witnesses, logKey }. The caller stops both.
 */
export async function witnessedGateway(names = ['w1.test/witness', 'w2.test/witness', 'w3.test/witness'], servers = ['calm']) {
  const gw = new Gateway();
  const witnesses = names.map((n) => new Witness(gw, n));
  try {
    await gw.start({ servers });
    const logKey = JSON.parse(await exportBundle(gw, path.join(gw.dir, 'first-export'))).trust.log_key;
    await Promise.all(witnesses.map((w) => w.start(logKey)));
    fs.appendFileSync(
      gw.config,
      `\n[log]\nwitnesses = [\n${witnesses.map((w) => `  { url = ${JSON.stringify(w.url)}, key = ${JSON.stringify(w.vkey)} },\n`).join('')}]\n`,
    );
    await gw.restart();
    // A new entry for the witnesses to cosign.
    await gw.cli('agents', 'add', 'witnessed');
    await waitUntilCosigned(gw, names.length);
    return { gw, witnesses, logKey };
  } catch (e) {
    await Promise.all(witnesses.map((w) => w.stop()));
    await gw.stop();
    throw e;
  }
}

/** Waits until `n` witnesses have cosigned the log at its sealed size. */
export function waitUntilCosigned(gw, n) {
  return waitFor(
    `${n} witnesses cosigning the log`,
    async () => {
      const w = await gw.api('/api/v1/log/witnesses');
      return w.witnesses.filter((x) => x.cosigned?.size === w.size).length >= n ? w : null;
    },
    60_000,
    250,
  );
}

// Run directly: start, print, and serve until interrupted.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { gw, witnesses, logKey } = await witnessedGateway();
  const stop = async () => {
    await Promise.all(witnesses.map((w) => w.stop()));
    await gw.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  console.log(
    JSON.stringify({ url: gw.base, reviewerKey: gw.reviewerKey, dir: gw.dir, logKey, witnesses: witnesses.map((w) => w.vkey), env: gw.env.INTERLOCK_KEYCHAIN_SERVICE }),
  );
}
