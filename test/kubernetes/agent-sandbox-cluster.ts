// kubernetes-sigs/agent-sandbox on the test cluster: its CRDs and its controller, which
// `sudo bash scripts/setup-kubernetes.sh --agent-sandbox` adds to the local cluster (and .ci/run
// runs so). A namespace for a test with the documented Role and the agent-sandbox Role.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { describeKubernetes, kubectl } from './cluster.ts';
import { type SandboxNamespace, createSandboxNamespace } from './sandbox-namespace.ts';

/** The local cluster's pid file of the controller (absent on a real cluster). */
export const CONTROLLER_PID_FILE = '/run/ai-toolbelt/kubernetes/pids/agent-sandbox-controller.pid';
const CRDS = [
  'sandboxes.agents.x-k8s.io',
  'sandboxtemplates.extensions.agents.x-k8s.io',
  'sandboxclaims.extensions.agents.x-k8s.io',
  'sandboxwarmpools.extensions.agents.x-k8s.io',
];
/** docs/kubernetes/agent-sandbox-role.yaml. */
export const ROLE = join(
  import.meta.dirname,
  '..',
  '..',
  'docs',
  'kubernetes',
  'agent-sandbox-role.yaml',
);

/** The controller's pid on the local cluster, if it runs. */
export function controllerPid(): number | undefined {
  try {
    const pid = Number(readFileSync(CONTROLLER_PID_FILE, 'utf8').trim());
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

async function missingPiece(): Promise<string | undefined> {
  try {
    await kubectl(['get', 'crd', ...CRDS]);
  } catch (error) {
    return (error as Error).message;
  }
  // On a real cluster (AI_TOOLBELT_KUBECONFIG) the controller runs as its Deployment.
  if (process.env.AI_TOOLBELT_KUBECONFIG === undefined && controllerPid() === undefined) {
    return `the agent-sandbox controller is not running (no live pid in ${CONTROLLER_PID_FILE})`;
  }
  return undefined;
}

const missing = await missingPiece().catch((error: Error) => error.message);

/**
 * `describeKubernetes` for tests that need agent-sandbox too. Without it: in CI (CI set) the
 * suite fails loudly (.ci/run installs it); elsewhere it is skipped with one console line.
 */
export function describeAgentSandbox(name: string, body: () => void): void {
  describeKubernetes(name, () => {
    if (missing === undefined) {
      body();
      return;
    }
    const why = `${missing}; run \`sudo bash scripts/setup-kubernetes.sh --agent-sandbox\``;
    if (process.env.CI) {
      it('needs agent-sandbox on the cluster (CI must run the agent-sandbox suite)', () => {
        throw new Error(`agent-sandbox suite cannot run in CI: ${why}`);
      });
    } else {
      console.log(`[agent-sandbox tests skipped] ${name}: ${why}`);
      describe.skip(name, body);
    }
  });
}

/** A test namespace with the sandbox Role and (unless `role: false`) the agent-sandbox Role. */
export async function createAgentSandboxNamespace({
  role = true,
}: { role?: boolean } = {}): Promise<SandboxNamespace> {
  const ns = await createSandboxNamespace('aitb-agent');
  if (role) {
    const manifest = readFileSync(ROLE, 'utf8').replaceAll('ai-toolbelt-sandbox', ns.namespace);
    await kubectl(['apply', '-f', '-'], { input: manifest });
  }
  return ns;
}

/** Names of the namespace's objects of `kind` (sandboxclaims, sandboxes, pods...). */
export async function names(namespace: string, kind: string): Promise<string[]> {
  const out = await kubectl(['get', kind, '-n', namespace, '-o', 'name']);
  return out
    .split('\n')
    .filter(Boolean)
    .map(line => line.slice(line.indexOf('/') + 1));
}

/** Waits (polling kubectl, 250 ms apart) until `check` holds, or throws what it last saw. */
export async function waitUntil<T>(
  what: string,
  read: () => Promise<T>,
  check: (value: T) => boolean,
  timeoutMs = 90_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!check(value)) {
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise(resolve => setTimeout(resolve, 250));
    value = await read();
  }
  return value;
}
