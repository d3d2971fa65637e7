import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Debian's Chromium (scripts/setup-chromium.sh); never a downloaded browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM_PATH)
    ? undefined
    : `no Chromium at ${CHROMIUM_PATH}; run \`sudo bash scripts/setup-chromium.sh\``;
}

/**
 * Headless Chromium with a fresh profile, flags for running as root on a
 * machine without a network (no background connections to Google's hosts).
 *
 * @example
 * await using browser = await launchChromium();
 * const page = await browser.context.newPage();
 */
export async function launchChromium(): Promise<{
  context: BrowserContext;
  [Symbol.asyncDispose]: () => Promise<void>;
}> {
  const profile = await mkdtemp(join(tmpdir(), 'ai-toolbelt-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1000, height: 900 },
  });
  return {
    context,
    async [Symbol.asyncDispose]() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
