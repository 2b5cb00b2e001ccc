import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's chromium, driven by playwright-core (no browser download). */
export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** false, or why the browser tests are skipped (for `describe(…, { skip })`). */
export function chromiumSkip(): false | string {
  if (existsSync(CHROMIUM)) return false;
  const reason = `${CHROMIUM} is missing (apt-get install -y chromium)`;
  process.stdout.write(`# skipping the dashboard browser tests: ${reason}\n`);
  return reason;
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}
