// A namespace for one test file, made from docs/kubernetes/sandbox-namespace.yaml (the how-to's
// manifest: restricted Pod Security, the Role, the RoleBinding, a deny-all NetworkPolicy), and a
// kubeconfig for its service account: the tests run the sandbox with exactly the documented
// rights, never as the cluster's admin.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesEngineOptions } from '../../src/sandbox/index.ts';
import { KUBECONFIG, kubectl } from './cluster.ts';

const MANIFEST = join(
  import.meta.dirname,
  '..',
  '..',
  'docs',
  'kubernetes',
  'sandbox-namespace.yaml',
);

/** A namespace made for a test, with the app's kubeconfig. */
export type SandboxNamespace = {
  namespace: string;
  /** A kubeconfig of the namespace's `ai-toolbelt-app` service account (the documented Role). */
  kubeconfig: string;
  /**
   * The namespace as the sandbox's engine, with the app's kubeconfig and the images the local
   * cluster imported (`imagePullPolicy: Never`), and `options` on top.
   */
  engine(options?: Partial<KubernetesEngineOptions>): { kubernetes: KubernetesEngineOptions };
  /** The namespace's pods now (name and phase). */
  pods(): Promise<Array<{ name: string; phase: string; deleting: boolean }>>;
  /** Deletes the namespace and the kubeconfig. */
  remove(): Promise<void>;
};

/** The admin kubeconfig's cluster entry (server and CA), for a kubeconfig of our own. */
function clusterEntry(): { server: string; ca: string } {
  const text = readFileSync(KUBECONFIG, 'utf8');
  const server = /server:\s*(\S+)/.exec(text)?.[1];
  const ca = /certificate-authority-data:\s*(\S+)/.exec(text)?.[1];
  if (!server || !ca) throw new Error(`${KUBECONFIG} has no server or certificate-authority-data`);
  return { server, ca };
}

/**
 * Applies the how-to's manifest under a fresh namespace name and returns the service account's
 * kubeconfig (a token of two hours from the TokenRequest API).
 */
export async function createSandboxNamespace(
  prefix = 'aitb-test',
  { extraRole }: { extraRole?: string } = {},
): Promise<SandboxNamespace> {
  const namespace = `${prefix}-${randomBytes(4).toString('hex')}`;
  const manifest = readFileSync(MANIFEST, 'utf8').replaceAll('ai-toolbelt-sandbox', namespace);
  await kubectl(['apply', '-f', '-'], { input: manifest + (extraRole ?? '') });
  // Pods wait for the namespace's default ServiceAccount, which the controller-manager makes.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = await kubectl(['get', 'serviceaccounts', '-n', namespace, '-o', 'name']);
    if (found.includes('serviceaccount/default')) break;
    if (Date.now() > deadline)
      throw new Error(`namespace ${namespace} got no default ServiceAccount`);
    await new Promise(resolve => setTimeout(resolve, 200));
  }
  const token = (
    await kubectl(['create', 'token', 'ai-toolbelt-app', '-n', namespace, '--duration=2h'])
  ).trim();
  const { server, ca } = clusterEntry();
  const dir = mkdtempSync(join(tmpdir(), 'aitb-kubeconfig-'));
  const kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: test, cluster: {server: "${server}", certificate-authority-data: ${ca}}}]`,
      `users: [{name: app, user: {token: "${token}"}}]`,
      `contexts: [{name: app, context: {cluster: test, user: app, namespace: ${namespace}}}]`,
      'current-context: app',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return {
    namespace,
    kubeconfig,
    engine: (options = {}) => ({
      kubernetes: { kubeconfig, namespace, imagePullPolicy: 'Never', ...options },
    }),
    pods: async () => {
      const listed = JSON.parse(await kubectl(['get', 'pods', '-n', namespace, '-o', 'json'])) as {
        items: Array<{
          metadata: { name: string; deletionTimestamp?: string };
          status: { phase: string };
        }>;
      };
      return listed.items.map(pod => ({
        name: pod.metadata.name,
        phase: pod.status.phase,
        deleting: pod.metadata.deletionTimestamp !== undefined,
      }));
    },
    remove: async () => {
      rmSync(dir, { recursive: true, force: true });
      await kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=120s']);
    },
  };
}
