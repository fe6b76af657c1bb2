// A fresh machine's gateway for the first-run browser tests: `interlock serve
// --ui ui/dist` on an empty data directory (no approver key, no reviewer), which
// prints a one-time sign-in link after its `listening on` line.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import fs from 'node:fs';
import path from 'node:path';
import { Gateway, interlockBin, uiDir, waitFor } from './harness.mjs';

export class FreshGateway extends Gateway {
  /** Starts it with `servers` (harness names) configured, `env` added and `extra` TOML appended. */
  async startFresh({ servers = ['newcomer'], env = {}, extra = '' } = {}) {
    Object.assign(this.env, env);
    this.config = path.join(this.dir, 'gateway.toml');
    fs.writeFileSync(
      this.config,
      `listen = "127.0.0.1:0"\nrecheck_secs = 2\n` + servers.map((s) => this.server(s)).join('\n') + (extra ? `\n${extra}\n` : ''),
    );
    this.child = spawn(interlockBin(), ['serve', '--config', this.config, '--ui', path.join(uiDir, 'dist')], {
      env: this.env,
      stdio: ['ignore', 'pipe', fs.openSync(path.join(this.dir, 'serve.log'), 'a')],
    });
    const rl = createInterface({ input: this.child.stdout });
    const lines = [];
    await new Promise((resolve, reject) => {
      rl.on('line', (l) => (lines.push(l), lines.length === 2 && resolve()));
      this.child.once('exit', (code) => reject(new Error(`interlock serve exited ${code}: ${this.log()}`)));
    });
    this.base = /^interlock gateway listening on (\S+)/.exec(lines[0])?.[1];
    // Not a terminal: the link is in an owner-only file, only its path printed (issue 39 item 15).
    const file = /^sign in: file (\S+)$/.exec(lines[1])?.[1];
    this.link = file && fs.readFileSync(file, 'utf8').trim();
    assert.ok(this.base && this.link, `${lines}: ${this.log()}`);
    return this;
  }

  /** Follows the link in `page` as `name`; resolves in the inbox, the reviewer key kept. */
  async signIn(page, name, T = 20_000) {
    await page.goto(this.link);
    await page.locator('#signin-name').waitFor({ timeout: T });
    await waitFor('a fingerprint', async () => /:/.test(await page.textContent('[data-testid=signin-fingerprint]')), T);
    await page.fill('#signin-name', name);
    await page.click('[data-testid=signin-submit]');
    await page.locator('[data-testid=inbox]').waitFor({ timeout: T });
    this.reviewerKey = await page.evaluate(() => localStorage.getItem('interlock.apiKey'));
  }
}
