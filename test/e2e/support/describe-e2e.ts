import { describe, it } from 'vitest';
import { DockerSandbox } from '../../../src/sandbox/index.ts';
import { chromiumMissing } from './chromium.ts';

// The library's own check (engine reachable, runsc registered, image present), once per file.
async function sandboxMissing(): Promise<string | undefined> {
  try {
    const sandbox = await DockerSandbox.create({ warmPoolSize: 0, sweepOnStart: false });
    await sandbox.close();
    return undefined;
  } catch (error) {
    return `no Docker + gVisor sandbox (${(error as Error).message.split('\n')[0]}); run \`sudo bash scripts/setup-sandbox.sh\``;
  }
}

const noSandbox = await sandboxMissing();

/**
 * `describe` for tests that need the real sandbox and/or Chromium. Without them: in CI the suite fails with the reason; elsewhere it
 * is skipped with one line.
 *
 * @example
 * describeWith({ browser: true }, 'hono example in a browser', () => { it('...', async () => {}); });
 */
export function describeWith(
  {
    browser = false,
    sandbox = true,
  }: {
    /** Needs Chromium. */
    browser?: boolean;
    /** Needs Docker + gVisor. */
    sandbox?: boolean;
  },
  name: string,
  body: () => void,
): void {
  const missing = (browser ? chromiumMissing() : undefined) ?? (sandbox ? noSandbox : undefined);
  if (missing === undefined) {
    describe(name, body);
    return;
  }
  if (process.env.CI) {
    describe(name, () => {
      it('has what it needs (CI must run it)', () => {
        throw new Error(`${name} cannot run in CI: ${missing}`);
      });
    });
    return;
  }
  console.log(`[tests skipped] ${name}: ${missing}`);
  describe.skip(name, body);
}

/**
 * `describe` for browser end-to-end tests: Chromium and the real sandbox.
 *
 * @example
 * describeE2E('hono example in a browser', () => { it('...', async () => {}); });
 */
export function describeE2E(name: string, body: () => void): void {
  describeWith({ browser: true }, name, body);
}
