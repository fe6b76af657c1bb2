// Headless Debian Chromium driven by playwright-core (no downloaded browsers).
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

export function launch() {
  // Not on the test's private session bus: Chromium would activate desktop
  // portals and notification daemons there for nothing.
  const env = { ...process.env };
  delete env.DBUS_SESSION_BUS_ADDRESS;
  return chromium.launch({
    executablePath: CHROMIUM,
    env,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A page signed in with the reviewer key `key` (at 1280 × 900, in
 * Europe/Berlin), whose console errors and page errors are pushed to
 * `problems`; `session` adds sessionStorage entries before any script runs.
 */
export async function reviewerPage(browser, key, problems, session = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1, timezoneId: 'Europe/Berlin' });
  const page = await ctx.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.addInitScript(
    ([key, session]) => {
      localStorage.setItem('interlock.apiKey', key);
      for (const [k, v] of Object.entries(session)) sessionStorage.setItem(k, v);
    },
    [key, session],
  );
  return page;
}
