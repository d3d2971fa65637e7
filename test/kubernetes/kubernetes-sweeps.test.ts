import { afterAll, beforeAll, expect, it } from 'vitest';
import { DockerSandbox } from '../../src/sandbox/index.ts';
import type { BoxSpec } from '../../src/sandbox/driver/engine-driver.ts';
import { INSTANCE_LABEL, SCOPE_LABEL } from '../../src/sandbox/driver/labels.ts';
import { resolveKubernetesEngine } from '../../src/sandbox/options/kubernetes-options.ts';
import { podManifest } from '../../src/sandbox/kubernetes/pod-spec.ts';
import { SANDBOX_IMAGE, describeKubernetes, kubectl, waitForPodEnd } from './cluster.ts';
import { type SandboxNamespace, createSandboxNamespace } from './sandbox-namespace.ts';

// What holds when no replica is left: the server ends every pod at its deadline, and any
// replica's sweep removes pods past their expiry label (of its scope only).
let ns: SandboxNamespace;

/** Creates a sandbox pod as another (gone) replica would have, living `ttlMs` (negative: expired). */
async function leftoverPod(
  name: string,
  { ttlMs, cmd = ['sleep', '600'], scope }: { ttlMs: number; cmd?: string[]; scope?: string },
): Promise<void> {
  const { kubernetes } = resolveKubernetesEngine({
    options: { namespace: ns.namespace, imagePullPolicy: 'Never' },
    argument: 'test',
  });
  const labels: Record<string, string> = { [INSTANCE_LABEL]: 'gone-replica' };
  if (scope !== undefined) labels[SCOPE_LABEL] = scope;
  const spec: BoxSpec = {
    limits: {
      ...{ image: SANDBOX_IMAGE, runtime: 'gvisor', memoryBytes: 128 << 20, cpus: 0.5 },
      ...{ pidsLimit: 128, tmpfsMiB: 8, labels },
    },
    ...{ cmd, ttlMs, kind: 'execute', stdinOnce: true, init: false },
  };
  const pod = podManifest({ name, spec, options: kubernetes });
  await kubectl(['create', '-f', '-'], { input: JSON.stringify(pod) });
}

describeKubernetes('Kubernetes engine: ends of life that need no replica', () => {
  beforeAll(async () => {
    ns = await createSandboxNamespace();
  }, 120_000);

  afterAll(async () => {
    await ns?.remove();
  }, 180_000);

  it('the API server ends a pod at activeDeadlineSeconds, with nothing of ours running', async () => {
    // No `timeout` wrapper here: only the server's deadline can end it.
    await leftoverPod('deadline', { ttlMs: 4_000 });
    expect(await waitForPodEnd(ns.namespace, 'deadline', 60_000)).toBe('Failed');
    const reason = await kubectl([
      ...['get', 'pod', 'deadline', '-n', ns.namespace],
      ...['-o', 'jsonpath={.status.reason}'],
    ]);
    expect(reason).toBe('DeadlineExceeded');
  }, 90_000);

  it("a sandbox's sweep removes expired pods of any replica of its scope, and leaves the rest", async () => {
    await leftoverPod('expired', { ttlMs: -120_000 });
    await leftoverPod('fresh', { ttlMs: 600_000 });
    await leftoverPod('expired-other-scope', { ttlMs: -120_000, scope: 'billing' });
    const sandbox = await DockerSandbox.create({
      engines: [ns.engine()],
      image: SANDBOX_IMAGE,
      warmPoolSize: 0,
    });
    try {
      const names = (await ns.pods()).filter(pod => !pod.deleting).map(pod => pod.name);
      expect(names).not.toContain('expired');
      expect(names).toContain('fresh');
      expect(names).toContain('expired-other-scope');
      expect(names).toContain('deadline'); // not expired by its label yet: within clockSkewMs
    } finally {
      await sandbox.close();
    }
    // close() removes this sandbox's pods only: the other replica's stay.
    expect((await ns.pods()).map(pod => pod.name).sort()).toEqual(
      expect.arrayContaining(['fresh', 'expired-other-scope']),
    );
  }, 120_000);
});
