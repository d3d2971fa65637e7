// The Kubernetes cluster the Kubernetes tests run against: by default the local single-node
// cluster of scripts/setup-kubernetes.sh (pods under gVisor, RuntimeClass `gvisor`), which
// `.ci/run` starts; with a real cluster set AI_TOOLBELT_KUBECONFIG and AI_TOOLBELT_KUBECTL.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { DEFAULT_SANDBOX_IMAGE } from '../../src/sandbox/options/default-image.ts';

export const SANDBOX_IMAGE = process.env.AI_TOOLBELT_SANDBOX_IMAGE ?? DEFAULT_SANDBOX_IMAGE;
export const KUBECONFIG =
  process.env.AI_TOOLBELT_KUBECONFIG ?? '/etc/ai-toolbelt/kubernetes/admin.kubeconfig';
const KUBECTL = process.env.AI_TOOLBELT_KUBECTL ?? '/var/lib/ai-toolbelt/kubernetes/bin/kubectl';
// kubectl's discovery cache, here rather than in ~/.kube.
const cacheDir = mkdtempSync(join(tmpdir(), 'aitb-kubectl-'));
process.on('exit', () => rmSync(cacheDir, { recursive: true, force: true }));

/** Runs kubectl against the test cluster; rejects with its stderr when it exits non-zero. */
export function kubectl(args: string[], { input }: { input?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      KUBECTL,
      ['--kubeconfig', KUBECONFIG, '--cache-dir', cacheDir, '--request-timeout=20s', ...args],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error
          ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr.trim() || error.message}`))
          : resolve(stdout),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Why the cluster cannot be used here, or undefined when it answers with RuntimeClass gvisor. */
async function missingPiece(): Promise<string | undefined> {
  if (!existsSync(KUBECONFIG)) return `no kubeconfig at ${KUBECONFIG}`;
  try {
    await kubectl(['get', '--raw', '/readyz']);
    await kubectl(['get', 'runtimeclass', 'gvisor']);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const missing = await missingPiece();

/**
 * `describe` for tests that need the cluster. Without it: in CI (CI set) the suite fails loudly;
 * elsewhere it is skipped with one console line.
 */
export function describeKubernetes(name: string, body: () => void): void {
  if (missing !== undefined) {
    const why = `${missing}; run \`sudo bash scripts/setup-kubernetes.sh\``;
    if (process.env.CI) {
      describe(name, () => {
        it('needs the Kubernetes cluster (CI must run the Kubernetes suite)', () => {
          throw new Error(`Kubernetes suite cannot run in CI: ${why}`);
        });
      });
    } else {
      console.log(`[kubernetes tests skipped] ${name}: ${why}`);
      describe.skip(name, body);
    }
    return;
  }
  describe(name, body);
}

/** Polls a pod until it ends (Succeeded or Failed) or `timeoutMs` passes; returns its phase. */
export async function waitForPodEnd(
  namespace: string,
  name: string,
  timeoutMs = 90_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let phase = '';
  while (Date.now() < deadline) {
    phase = await kubectl(['get', 'pod', name, '-n', namespace, '-o', 'jsonpath={.status.phase}']);
    if (phase === 'Succeeded' || phase === 'Failed') return phase;
    await new Promise(resolve => setTimeout(resolve, 250));
  }
  const described = await kubectl(['describe', 'pod', name, '-n', namespace]).catch(
    (error: Error) => error.message,
  );
  throw new Error(`pod ${namespace}/${name} still ${phase} after ${timeoutMs} ms:\n${described}`);
}
