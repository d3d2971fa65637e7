import { createStorage } from 'unstorage';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { SandboxBusyError } from '../../src/errors/sandbox-busy-error.ts';
import { type ConversationOptions, DockerSandbox } from '../../src/sandbox/index.ts';
import { SANDBOX_IMAGE, describeKubernetes, kubectl } from './cluster.ts';
import { type SandboxNamespace, createSandboxNamespace } from './sandbox-namespace.ts';
import { peakDuring } from '../sandbox/conversation/bounds/peak-during.ts';

// Bounds and warm pools that the cluster enforces: replicas here share nothing but the cluster
// (each has its own in-memory store), yet never pass the bounds together (leases in the API
// server, written with compare-and-set), and never take the same waiting pod (one conditional
// update of its labels).
const KEY = 'kubernetes-bounds-key-0123456789abcdef';
let ns: SandboxNamespace;
const opened: DockerSandbox[] = [];

/** Two replicas of one app, each with a store of its own. */
async function replicas(
  conversations: ConversationOptions,
  { warmPoolSize = 0, scope }: { warmPoolSize?: number; scope?: string } = {},
): Promise<[DockerSandbox, DockerSandbox]> {
  const pair = await Promise.all(
    [0, 1].map(() =>
      DockerSandbox.create({
        engines: [ns.engine()],
        ...{ image: SANDBOX_IMAGE, warmPoolSize, preimport: [], ...(scope ? { scope } : {}) },
        conversations: {
          store: createStorage(),
          encryptionKey: KEY,
          warmPoolSize: 0,
          ...conversations,
        },
      }),
    ),
  );
  opened.push(...pair);
  return pair as [DockerSandbox, DockerSandbox];
}

/** Live conversation pods of `scope` (starting, running or being deleted: all hold a node's room). */
async function interpreters(scope?: string): Promise<string[]> {
  const selector = ['ai-toolbelt.sandbox.kind=conversation'];
  if (scope !== undefined) selector.push(`ai-toolbelt.sandbox.scope=${scope}`);
  const listed = JSON.parse(
    await kubectl(['get', 'pods', '-n', ns.namespace, '-l', selector.join(','), '-o', 'json']),
  ) as { items: Array<{ metadata: { name: string }; status: { phase: string } }> };
  return listed.items
    .filter(pod => pod.status.phase === 'Pending' || pod.status.phase === 'Running')
    .map(pod => pod.metadata.name);
}

/** The most live interpreters of `scope` at once while `work` runs (the API server polled throughout). */
const peakOf = <T>(scope: string, work: () => Promise<T>) =>
  peakDuring(async () => (await interpreters(scope)).length, work);

describeKubernetes('Kubernetes engine: bounds and warm pools across replicas', () => {
  beforeAll(async () => {
    ns = await createSandboxNamespace();
  }, 120_000);

  afterAll(async () => {
    for (const sandbox of opened) await sandbox.close();
    expect((await ns.pods()).filter(pod => !pod.deleting)).toEqual([]);
    await ns?.remove();
  }, 300_000);

  it('twelve users at once on two replicas against maxInterpreters 4: never more than 4 live', async () => {
    const scope = 'twelve';
    const [a, b] = await replicas({ maxInterpreters: 4, maxPerEngine: 4 }, { scope });
    const [results, peak] = await peakOf(scope, () =>
      Promise.allSettled(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 === 0 ? a : b).executeCell('x = 1', {
            conversation: { id: `chat-${i}`, userId: `user-${i}` },
            timeoutMs: 60_000,
          }),
        ),
      ),
    );
    const refused = results.filter(result => result.status === 'rejected');
    for (const { reason } of refused) {
      expect(SandboxBusyError.isInstance(reason), String(reason)).toBe(true);
      expect(reason).toMatchObject({ resource: 'interpreters', limit: 4 });
    }
    expect(peak).toBeLessThanOrEqual(4);
    expect(results.length - refused.length).toBe(4);
    expect(await interpreters(scope)).toHaveLength(4);
  }, 300_000);

  it('one user on both replicas at once against maxPerUser 2: never more than 2 live', async () => {
    const scope = 'per-user';
    const [a, b] = await replicas(
      { maxInterpreters: 8, maxPerEngine: 8, maxPerUser: 2 },
      { scope },
    );
    const cell = (sandbox: DockerSandbox, id: string) =>
      sandbox.executeCell('x = 1', { conversation: { id, userId: 'carol' }, timeoutMs: 60_000 });
    await cell(a, 'first');
    await cell(b, 'second');
    const [results, peak] = await peakOf(scope, () =>
      Promise.all([cell(a, 'third'), cell(b, 'fourth')]),
    );
    expect(results.map(result => result.status)).toEqual(['success', 'success']);
    expect(peak).toBeLessThanOrEqual(2);
    expect(await interpreters(scope)).toHaveLength(2);
  }, 300_000);

  it('a waiting interpreter is taken by exactly one of two replicas asking at once', async () => {
    const scope = 'claims';
    const [a, b] = await replicas({ warmPoolSize: 1, maxPerUser: 3 }, { scope });
    // One waiting interpreter for the whole cluster, whichever replica started it.
    await vi.waitFor(
      async () => expect(a.warmInterpreterCount + b.warmInterpreterCount).toBeGreaterThan(0),
      {
        timeout: 120_000,
        interval: 250,
      },
    );
    const [waiting] = await interpreters(scope);
    expect(waiting).toBeDefined();
    const hosts = await Promise.all(
      [a, b].map((sandbox, i) =>
        sandbox
          .executeCell('import os\nprint(os.environ["HOSTNAME"])', {
            conversation: { id: `race-${i}`, userId: `racer-${i}` },
            timeoutMs: 60_000,
          })
          .then(result => result.stdout.trim()),
      ),
    );
    expect(new Set(hosts).size).toBe(2);
    expect(hosts.filter(host => host === waiting)).toHaveLength(1);
  }, 300_000);

  it("the one-shot warm pool is the cluster's: 2 waiting pods for two replicas, each taken once", async () => {
    const [a, b] = await replicas({}, { warmPoolSize: 2, scope: 'runs' });
    // Waiting means running: a pool pod still starting is not handed out (the run gets its own).
    const waiting = async () =>
      (await ns.pods()).filter(
        pod =>
          pod.name.startsWith('ai-toolbelt-execute-') && pod.phase === 'Running' && !pod.deleting,
      );
    await vi.waitFor(async () => expect(await waiting()).toHaveLength(2), {
      timeout: 120_000,
      interval: 250,
    });
    // Each replica's counts follow its own marks at once (not at its next fill, 30 s away).
    await vi.waitFor(() => expect(a.warmReadyCount + b.warmReadyCount).toBeGreaterThanOrEqual(2), {
      timeout: 20_000,
      interval: 100,
    });
    const before = new Set((await waiting()).map(pod => pod.name));
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? a : b).execute('import os\nprint(os.environ["HOSTNAME"])', { timeoutMs: 60_000 }),
      ),
    );
    const hosts = runs.map(run => run.stdout.trim());
    expect(runs.map(run => run.status)).toEqual(Array(6).fill('success'));
    expect(new Set(hosts).size).toBe(6);
    expect(hosts.filter(host => before.has(host)).length).toBeGreaterThanOrEqual(1);
  }, 300_000);
});
