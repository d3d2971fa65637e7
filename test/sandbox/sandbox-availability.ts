import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_SANDBOX_IMAGE,
  DockerSandbox,
  type DockerSandboxOptions,
} from '../../src/sandbox/index.ts';
import { listSandboxContainers } from '../../src/internal.ts';

export const SANDBOX_IMAGE = process.env.AI_TOOLBELT_SANDBOX_IMAGE ?? DEFAULT_SANDBOX_IMAGE;

/** Why the real sandbox cannot run here, or undefined when Docker, runsc and the image are present. */
async function missingPiece(docker: Docker): Promise<string | undefined> {
  try {
    const info = (await docker.info()) as { Runtimes?: Record<string, unknown> };
    if (info.Runtimes?.runsc === undefined)
      return 'the Docker engine has no runsc (gVisor) runtime';
    await docker.getImage(SANDBOX_IMAGE).inspect();
    return undefined;
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode;
    return status === 404
      ? `the image ${SANDBOX_IMAGE} is missing`
      : `no Docker engine (${(error as Error).message})`;
  }
}

export const docker = new Docker();
const missing = await missingPiece(docker);

/**
 * `describe` for tests that need real Docker + gVisor. Without them: in CI (CI set) the suite
 * fails loudly; elsewhere it is skipped with one console line.
 */
export function describeSandbox(name: string, body: () => void): void {
  if (missing !== undefined) {
    const why = `${missing}; run \`sudo bash scripts/setup-sandbox.sh\``;
    if (process.env.CI) {
      describe(name, () => {
        it('needs Docker + gVisor (CI must run the sandbox suite)', () => {
          throw new Error(`Sandbox suite cannot run in CI: ${why}`);
        });
      });
    } else {
      console.log(`[sandbox tests skipped] ${name}: ${why}`);
      describe.skip(name, body);
    }
    return;
  }
  describe(name, body);
}

/** Asserts that this test process left no labelled container (call after closing sandboxes). */
export async function expectNoLeakedContainers(): Promise<void> {
  const left = await listSandboxContainers({ docker, pid: process.pid });
  expect(left.map(c => `${c.Id.slice(0, 12)} ${c.State}`)).toEqual([]);
}

/**
 * One DockerSandbox (these tests' image and engine) for the enclosing suite: created before its
 * tests and handed to `ready` (which may set up more, e.g. a session), closed after them (its
 * sessions with it) with a
 * check that this process left no container behind.
 */
export function suiteSandbox(
  options: Omit<DockerSandboxOptions, 'image' | 'docker'>,
  ready: (sandbox: DockerSandbox) => void | Promise<void>,
): void {
  let sandbox: DockerSandbox | undefined;
  beforeAll(async () => {
    sandbox = await DockerSandbox.create({ image: SANDBOX_IMAGE, docker, ...options });
    await ready(sandbox);
  });
  afterAll(async () => {
    await sandbox?.close();
    await expectNoLeakedContainers();
  });
}
