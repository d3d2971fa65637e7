import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DockerSandbox, SandboxUnavailableError } from '../../src/sandbox/index.ts';
import { SANDBOX_IMAGE, describeKubernetes } from './cluster.ts';
import { type SandboxNamespace, createSandboxNamespace } from './sandbox-namespace.ts';

// A node crash and restart (kill -9 of the kubelet and containerd, both started again) in the
// middle of a conversation. It stops every pod's attach on the node, so this file runs alone
// (npm test runs it after the others): the cell in flight settles with a result or a typed
// error, never hangs; the conversations go on with their state; runs work; no pod is left.
const run = promisify(execFile);
const script = fileURLToPath(new URL('../../scripts/setup-kubernetes.sh', import.meta.url));
let ns: SandboxNamespace;
let sandbox: DockerSandbox;

describeKubernetes('Kubernetes engine: a node restart mid-conversation', () => {
  beforeAll(async () => {
    ns = await createSandboxNamespace();
    sandbox = await DockerSandbox.create({
      engines: [ns.engine()],
      ...{ image: SANDBOX_IMAGE, warmPoolSize: 1, preimport: [] },
      conversations: { warmPoolSize: 0 },
    });
  }, 120_000);

  afterAll(async () => {
    await sandbox?.close();
    expect((await ns.pods()).filter(pod => !pod.deleting)).toEqual([]);
    await ns?.remove();
  }, 180_000);

  it('settles the cell in flight, then both conversations go on with their state', async () => {
    const busy = { id: 'busy', userId: 'ann' };
    const idle = { id: 'idle', userId: 'bob' };
    await sandbox.executeCell('x = 41', { conversation: busy, timeoutMs: 30_000 });
    await sandbox.executeCell('y = "kept"', { conversation: idle, timeoutMs: 30_000 });
    const started = performance.now();
    // The restart comes once the cell has printed: it runs in its interpreter by then.
    let printed: () => void = () => {};
    const running = new Promise<void>(resolve => (printed = resolve));
    const inFlight = sandbox
      .executeCell(
        'import time\nfor i in range(40):\n    print(i, flush=True)\n    time.sleep(0.5)\nx += 1',
        { conversation: busy, timeoutMs: 60_000, onOutput: () => printed() },
      )
      .then(
        result => ({ result }),
        (error: unknown) => ({ error }),
      );
    await Promise.race([running, inFlight]);
    const { stdout } = await run('bash', [script, '--restart-node']);
    expect(stdout).toMatch(/the node is back in \d+ s/);
    const settled = await inFlight;
    // Settled well within the cell's own limit: its attach broke with the kubelet.
    expect(performance.now() - started).toBeLessThan(60_000);
    if ('error' in settled) {
      expect(SandboxUnavailableError.isInstance(settled.error), String(settled.error)).toBe(true);
    } else {
      // Its outcome is unknown: the interpreter is ended, not trusted (its `x += 1` is lost).
      expect(settled.result.status).toBe('crashed');
      expect(settled.result.ended).toBeDefined();
    }
    const after = await sandbox.executeCell('print(x)', { conversation: busy, timeoutMs: 60_000 });
    expect(after).toMatchObject({ status: 'success', stdout: '41\n' });
    expect(after.restored).toMatchObject({ method: 'replay' });
    // The idle conversation's pod lived through the restart (its gVisor sandbox never stopped),
    // or was restored: either way its state is there.
    const other = await sandbox.executeCell('print(y)', { conversation: idle, timeoutMs: 60_000 });
    expect(other).toMatchObject({ status: 'success', stdout: 'kept\n' });
    const oneShot = await sandbox.execute('print(6 * 7)', { timeoutMs: 60_000 });
    expect(oneShot).toMatchObject({ status: 'success', stdout: '42\n' });
  }, 240_000);
});
