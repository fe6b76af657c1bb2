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
