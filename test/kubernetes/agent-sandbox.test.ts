import { readFileSync } from 'node:fs';
import { createStorage } from 'unstorage';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  DockerSandbox,
  type DockerSandboxOptions,
  SandboxUnavailableError,
} from '../../src/sandbox/index.ts';
import {
  ROLE,
  controllerPid,
  createAgentSandboxNamespace,
  describeAgentSandbox,
  names,
  waitUntil,
} from './agent-sandbox-cluster.ts';
import { SANDBOX_IMAGE, kubectl } from './cluster.ts';
import type { SandboxNamespace } from './sandbox-namespace.ts';

// The Kubernetes engine with `agentSandbox`: runs and conversation interpreters are warm
// sandboxes of agent-sandbox's SandboxWarmPools, taken by SandboxClaims (two replicas never get
// the same one), given back by deleting the claim; a cluster whose controller does not bind
// claims, or a namespace without the agent-sandbox Role, is a typed refusal.
const KEY = 'agent-sandbox-conversation-key-0123456789abcdef';
const WARM = 2;
let ns: SandboxNamespace;
const open: DockerSandbox[] = [];

function options(extra: Partial<DockerSandboxOptions> = {}): DockerSandboxOptions {
  return {
    engines: [ns.engine({ agentSandbox: { warmPoolSize: WARM } })],
    image: SANDBOX_IMAGE,
    preimport: [],
    conversations: { store: createStorage(), encryptionKey: KEY },
    ...extra,
  };
}

async function replica(extra: Partial<DockerSandboxOptions> = {}): Promise<DockerSandbox> {
  const sandbox = await DockerSandbox.create(options(extra));
  open.push(sandbox);
  return sandbox;
}

type Listed = {
  items: Array<{
    metadata: { name: string; ownerReferences?: Array<{ kind: string; name: string }> };
    status?: { readyReplicas?: number };
  }>;
};

async function list(kind: string): Promise<Listed['items']> {
  return (JSON.parse(await kubectl(['get', kind, '-n', ns.namespace, '-o', 'json'])) as Listed)
    .items;
}

/** The warm pool of `kind` boxes (execute, conversation) once it has `WARM` Ready sandboxes. */
async function readyPool(kind: string): Promise<string> {
  const pools = await waitUntil(
    `a Ready SandboxWarmPool of ${kind} boxes`,
    () => list('sandboxwarmpools'),
    found =>
      found.some(
        pool =>
          pool.metadata.name.startsWith(`ai-toolbelt-${kind}-`) &&
          pool.status?.readyReplicas === WARM,
      ),
    120_000,
  );
  return pools.find(pool => pool.metadata.name.startsWith(`ai-toolbelt-${kind}-`))!.metadata.name;
}

const HOSTNAME = 'import os\nprint(os.environ["HOSTNAME"])';

describeAgentSandbox('Kubernetes engine through agent-sandbox claims', () => {
  beforeAll(async () => {
    ns = await createAgentSandboxNamespace();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(open.map(sandbox => sandbox.close()));
    // The warm pools are the cluster's (they outlive replicas, as a Deployment would).
    await kubectl(['delete', 'sandboxwarmpools,sandboxtemplates', '--all', '-n', ns.namespace]);
    await ns?.remove();
  }, 240_000);

  it('runs code in a warm sandbox taken by a claim, and gives it back', async () => {
    const sandbox = await replica();
    // The first run makes the template and its pool (and is itself served cold or warm).
    const first = await sandbox.execute('print(6 * 7)', { timeoutMs: 60_000 });
    expect(first).toMatchObject({ status: 'success', stdout: '42\n' });
    const pool = await readyPool('execute');
    const run = await sandbox.execute(HOSTNAME, { timeoutMs: 60_000 });
    const pod = run.stdout.trim();
    // A warm pool's sandboxes (and their pods) are named after the pool.
    expect(pod.startsWith(`${pool}-`)).toBe(true);
    await waitUntil(
      'the claim, sandbox and pod given back',
      async () => {
        const [claims, sandboxes, pods] = await Promise.all([
          names(ns.namespace, 'sandboxclaims'),
          names(ns.namespace, 'sandboxes'),
          names(ns.namespace, 'pods'),
        ]);
        return { claims: claims.length, sandbox: sandboxes.includes(pod), pod: pods.includes(pod) };
      },
      found => found.claims === 0 && !found.sandbox && !found.pod,
    );
    const pods = await list('pods');
    expect(pods.map(found => found.metadata.name)).not.toContain(pod);
  }, 240_000);

  it('keeps a conversation in one claimed interpreter pod across cells', async () => {
    const sandbox = open[0]!;
    // The first conversation makes the interpreters' template and pool.
    const first = await sandbox.executeCell('print(1)', {
      conversation: { id: 'chat-0', userId: 'alice' },
      timeoutMs: 60_000,
    });
    expect(first).toMatchObject({ status: 'success', stdout: '1\n' });
    const pool = await readyPool('conversation');
    const conversation = { id: 'chat-1', userId: 'bob' };
    const cell = await sandbox.executeCell('rows = [1, 2, 3]\nprint(len(rows))', {
      conversation,
      timeoutMs: 60_000,
    });
    expect(cell).toMatchObject({ status: 'success', stdout: '3\n' });
    const next = await sandbox.executeCell(`rows.append(4)\n${HOSTNAME}\nprint(sum(rows))`, {
      conversation,
      timeoutMs: 60_000,
    });
    expect(next).toMatchObject({ status: 'success' });
    const [pod, total] = next.stdout.trim().split('\n');
    expect(total).toBe('10');
    // A warm interpreter of the pool, held by a claim of this sandbox.
    expect(pod!.startsWith(`${pool}-`)).toBe(true);
    const claims = JSON.parse(
      await kubectl(['get', 'sandboxclaims', '-n', ns.namespace, '-o', 'json']),
    ) as {
      items: Array<{
        spec: { warmPoolRef: { name: string } };
        status?: { sandbox?: { name?: string } };
      }>;
    };
    const held = claims.items.find(claim => claim.status?.sandbox?.name === pod);
    expect(held?.spec.warmPoolRef.name).toBe(pool);
    // The pool's pod is the engine's hardened pod, labelled as the engine's own once claimed.
    const found = JSON.parse(await kubectl(['get', 'pod', pod!, '-n', ns.namespace, '-o', 'json']));
    expect(found.spec).toMatchObject({
      runtimeClassName: 'gvisor',
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: {
        runAsUser: 65534,
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      volumes: [{ name: 'tmp', emptyDir: { medium: 'Memory' } }],
    });
    expect(found.spec.activeDeadlineSeconds).toBeGreaterThan(0);
    expect(found.spec.containers[0].securityContext).toEqual({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(found.metadata.labels).toMatchObject({
      'ai-toolbelt.sandbox': '1',
      'ai-toolbelt.sandbox.instance': sandbox.instanceId,
      'ai-toolbelt.sandbox.kind': 'conversation',
      'ai-toolbelt.sandbox.claim': expect.stringMatching(/^ai-toolbelt-claim-/),
    });
  }, 240_000);

  it('ends a run at its timeout by giving its claim back', async () => {
    const sandbox = open[0]!;
    const result = await sandbox.execute(
      'import os\nprint(os.uname().release, flush=True)\nwhile True: pass',
      {
        timeoutMs: 3_000,
      },
    );
    // gVisor's own kernel: the claimed pod runs under runsc.
    expect(result).toMatchObject({ status: 'timeout', stdout: '4.4.0\n' });
    await waitUntil(
      'the claim of the timed-out run given back',
      async () =>
        JSON.parse(
          await kubectl(['get', 'sandboxclaims', '-n', ns.namespace, '-o', 'json']),
        ).items.filter(
          (claim: { metadata: { labels?: Record<string, string> } }) =>
            claim.metadata.labels?.['ai-toolbelt.sandbox.kind'] === 'execute',
        ).length,
      count => count === 0,
    );
  }, 120_000);

  it('two replicas take warm sandboxes, never the same one', async () => {
    const [a, b] = [open[0]!, await replica()];
    const pool = await readyPool('execute');
    const code = `${HOSTNAME}\nimport time\ntime.sleep(1)`;
    const runs = await Promise.all(
      [a, a, a, b, b, b].map(sandbox => sandbox.execute(code, { timeoutMs: 60_000 })),
    );
    const pods = runs.map(run => run.stdout.trim());
    expect(runs.map(run => run.status)).toEqual(runs.map(() => 'success'));
    expect(new Set(pods).size).toBe(pods.length);
    // The warm ones were the pool's (the rest were made cold for their claims).
    expect(pods.filter(pod => pod.startsWith(`${pool}-`)).length).toBeGreaterThanOrEqual(1);
  }, 240_000);

  it('makes the pool and template again when they were deleted meanwhile', async () => {
    await kubectl(['delete', 'sandboxwarmpools,sandboxtemplates', '--all', '-n', ns.namespace]);
    const run = await open[0]!.execute('print("again")', { timeoutMs: 60_000 });
    expect(run).toMatchObject({ status: 'success', stdout: 'again\n' });
    const pools = (await list('sandboxwarmpools')).map(pool => pool.metadata.name);
    expect(pools.some(pool => pool.startsWith('ai-toolbelt-execute-'))).toBe(true);
  }, 180_000);

  it('close() leaves no claims, and no sandboxes or pods but the warm pools', async () => {
    await Promise.all(open.splice(0).map(sandbox => sandbox.close()));
    expect(await names(ns.namespace, 'sandboxclaims')).toEqual([]);
    const sandboxes = await waitUntil(
      'only the warm pools sandboxes',
      () => list('sandboxes'),
      found =>
        found.every(sandbox => sandbox.metadata.ownerReferences?.[0]?.kind === 'SandboxWarmPool'),
    );
    const pods = await waitUntil(
      'only the warm pools pods',
      () => names(ns.namespace, 'pods'),
      found => found.every(pod => sandboxes.some(sandbox => sandbox.metadata.name === pod)),
    );
    expect(pods.length).toBeLessThanOrEqual(2 * WARM);
    // Deleting the pools leaves nothing: the cluster's garbage collector removes the rest.
    await kubectl(['delete', 'sandboxwarmpools', '--all', '-n', ns.namespace]);
    await waitUntil(
      'no sandboxes or pods',
      async () => [
        ...(await names(ns.namespace, 'sandboxes')),
        ...(await names(ns.namespace, 'pods')),
      ],
      found => found.length === 0,
    );
  }, 240_000);

  // Stops the local cluster's controller process for a moment (a real cluster's runs as a Deployment).
  it.skipIf(process.env.AI_TOOLBELT_KUBECONFIG !== undefined)(
    'refuses with a typed error when the controller does not bind claims',
    async () => {
      const pid = controllerPid();
      expect(pid, 'the local cluster runs the agent-sandbox controller').toBeDefined();
      const sandbox = await replica({
        engines: [ns.engine({ agentSandbox: { warmPoolSize: 0 }, podStartTimeoutMs: 5_000 })],
      });
      // A stopped (not killed) controller: it holds no claim until it is continued.
      process.kill(pid!, 'SIGSTOP');
      let error: unknown;
      try {
        error = await sandbox
          .execute('print(1)', { timeoutMs: 30_000 })
          .catch((failed: unknown) => failed);
      } finally {
        process.kill(pid!, 'SIGCONT');
      }
      expect(SandboxUnavailableError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ reason: 'agent-sandbox-unavailable' });
      expect((error as Error).message).toMatch(/did not act on SandboxClaim .*--agent-sandbox/s);
      // The claim that was never bound is gone too.
      expect(await names(ns.namespace, 'sandboxclaims')).toEqual([]);
    },
    120_000,
  );

  it('refuses with the Role to grant when the namespace lacks the agent-sandbox Role or a verb of it', async () => {
    const bare = await createAgentSandboxNamespace({ role: false });
    const refusal = () =>
      DockerSandbox.create({
        engines: [bare.engine({ agentSandbox: true })],
        image: SANDBOX_IMAGE,
      }).then(
        async sandbox => {
          await sandbox.close();
          return undefined;
        },
        (failed: unknown) => failed,
      );
    try {
      const none = await refusal();
      expect(none).toMatchObject({ reason: 'forbidden' });
      expect((none as Error).message).toContain('docs/kubernetes/agent-sandbox-role.yaml');
      // The documented Role without `delete` on claims: the check names the missing verb.
      const role = readFileSync(ROLE, 'utf8')
        .replaceAll('ai-toolbelt-sandbox', bare.namespace)
        .replace('verbs: [create, get, list, watch, delete]', 'verbs: [create, get, list, watch]');
      await kubectl(['apply', '-f', '-'], { input: role });
      const partial = await refusal();
      expect(partial).toMatchObject({ reason: 'forbidden' });
      expect((partial as Error).message).toContain(
        'delete sandboxclaims (extensions.agents.x-k8s.io)',
      );
    } finally {
      await bare.remove();
    }
  }, 180_000);
});
