import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { DEFAULT_LOCAL_MODEL } from '../../../src/local-embedding/local-models.ts';
import { MANIFEST_FILE } from '../../../src/local-embedding/models-dir.ts';
import { DockerSandbox } from '../../../src/sandbox/index.ts';
import { localModelPath } from '../../helpers/local-model.ts';
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

// The examples' default tool retrieval: the local model `fetch-model` installs (.ci/run does).
function localModelMissing(): string | undefined {
  const path = localModelPath(DEFAULT_LOCAL_MODEL);
  if (existsSync(join(path, MANIFEST_FILE))) return undefined;
  return `no local embedding model at ${path}; run \`node src/cli.ts fetch-model\``;
}

/**
 * `describe` for tests that need the real sandbox, Chromium and/or the local embedding model. Without them: in CI the suite fails
 * with the reason; elsewhere it is skipped with one line.
 *
 * @example
 * describeWith({ browser: true }, 'hono example in a browser', () => { it('...', async () => {}); });
 */
export function describeWith(
  {
    browser = false,
    sandbox = true,
    localModel = false,
  }: {
    /** Needs Chromium. */
    browser?: boolean;
    /** Needs Docker + gVisor. */
    sandbox?: boolean;
    /** Needs the default local embedding model, installed. */
    localModel?: boolean;
  },
  name: string,
  body: () => void,
): void {
  const missing =
    (browser ? chromiumMissing() : undefined) ??
    (sandbox ? noSandbox : undefined) ??
    (localModel ? localModelMissing() : undefined);
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
 * `describe` for browser end-to-end tests of the examples as `npm start` runs them: Chromium, the
 * real sandbox and the local embedding model.
 *
 * @example
 * describeE2E('hono example in a browser', () => { it('...', async () => {}); });
 */
export function describeE2E(name: string, body: () => void): void {
  describeWith({ browser: true, localModel: true }, name, body);
}
