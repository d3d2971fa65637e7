// Two replicas of an app share one engine, each in its own PID namespace (PID 1 in both) with
// the same host name, as on container platforms. Ownership is by instance label and expiry
// only: one replica's start-up, sweeps and close never touch the other's containers.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it, vi } from 'vitest';
import { listSandboxContainers } from '../../src/internal.ts';
import { SANDBOX_IMAGE, describeSandbox, docker } from './sandbox-availability.ts';

type Event = { event: string; [key: string]: unknown };

const fixture = fileURLToPath(new URL('./fleet/replica.ts', import.meta.url));
// The replicas sweep every second with no clock-skew margin: only within this scope, so other
// test files' containers on the shared engine are never theirs to judge.
const scope = `replicas-test-${randomUUID().slice(0, 8)}`;

/** A replica process in a fresh PID namespace, with a queue of the events it printed. */
class Replica {
  readonly child: ChildProcessWithoutNullStreams;
  private readonly events: Event[] = [];
  private readonly waiting = new Set<() => void>();
  readonly exited: Promise<number | null>;

  constructor() {
    this.child = spawn('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, fixture], {
      env: {
        ...process.env,
        AI_TOOLBELT_SANDBOX_IMAGE: SANDBOX_IMAGE,
        AI_TOOLBELT_TEST_SCOPE: scope,
      },
      // Its own process group, so a kill -9 reaches the namespace's PID 1 too.
      detached: true,
    });
    createInterface({ input: this.child.stdout }).on('line', line => {
      this.events.push(JSON.parse(line) as Event);
      for (const wake of this.waiting) wake();
    });
    let stderr = '';
    this.child.stderr.on('data', chunk => (stderr += chunk));
    this.exited = new Promise(resolve =>
      this.child.on('exit', code => {
        if (code !== 0 && code !== null) console.error(`replica exited ${code}: ${stderr}`);
        resolve(code);
      }),
    );
  }

  send(command: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify(command)}\n`);
  }

  /** Waits for (and takes) the next event matching `predicate`. */
  async next(predicate: (event: Event) => boolean, timeoutMs = 60_000): Promise<Event> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.events.findIndex(predicate);
      if (index >= 0) return this.events.splice(index, 1)[0]!;
      if (Date.now() > deadline)
        throw new Error(`no matching event; got ${JSON.stringify(this.events)}`);
      await new Promise<void>(resolve => {
        const wake = () => {
          this.waiting.delete(wake);
          resolve();
        };
        this.waiting.add(wake);
        setTimeout(wake, 200);
      });
    }
  }

  kill(): void {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

const byInstance = async (instanceId: string) =>
  (await listSandboxContainers({ docker, instanceId, scope })).map(info => ({
    id: info.Id,
    state: info.State,
    kind: info.Labels['ai-toolbelt.sandbox.kind'],
  }));

const unshareWorks =
  process.getuid?.() === 0 &&
  spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

describeSandbox('replicas in separate PID namespaces sharing one engine', () => {
  const replicas: Replica[] = [];
  const instances: string[] = [];

  afterAll(async () => {
    for (const replica of replicas) if (replica.child.exitCode === null) replica.kill();
    // A crashed replica's warm containers expire later than a test lasts: removed here.
    for (const instanceId of instances) {
      for (const { id } of await byInstance(instanceId)) {
        await docker
          .getContainer(id)
          .remove({ force: true })
          .catch(() => {});
      }
    }
  });

  it('never touch each other’s warm pool, run in flight or session; a crashed one’s go at their expiry', async () => {
    if (!unshareWorks) {
      if (process.env.CI) throw new Error('unshare --pid needs root; CI runs as root');
      console.log('[replica test skipped] needs root for unshare --pid');
      return;
    }
    const a = new Replica();
    replicas.push(a);
    const readyA = await a.next(e => e.event === 'ready');
    instances.push(readyA.instanceId as string);
    expect(readyA).toMatchObject({ pid: 1, hostname: hostname() });

    a.send({ command: 'session', content: 'kept by A' });
    await a.next(e => e.event === 'session-ready');
    a.send({
      command: 'run',
      id: 'long',
      code: 'import time\nprint("started", flush=True)\ntime.sleep(30)\nprint("done")',
    });
    await a.next(e => e.event === 'run-started');
    // Two warm containers (the pool refills behind the run), the run's and the session's.
    let ownedByA: Awaited<ReturnType<typeof byInstance>> = [];
    await vi.waitFor(
      async () => {
        ownedByA = await byInstance(readyA.instanceId as string);
        expect(ownedByA.filter(c => c.kind === 'session')).toHaveLength(1);
        expect(ownedByA.filter(c => c.state === 'running')).toHaveLength(4);
      },
      { timeout: 30_000, interval: 200 },
    );

    // B: same host name, also PID 1. Its start-up sweep, its work and its close run now.
    const b = new Replica();
    replicas.push(b);
    const readyB = await b.next(e => e.event === 'ready');
    instances.push(readyB.instanceId as string);
    expect(readyB).toMatchObject({ pid: 1, hostname: hostname() });
    expect(readyB.instanceId).not.toBe(readyA.instanceId);
    b.send({ command: 'session', content: 'B' });
    await b.next(e => e.event === 'session-ready');
    b.send({ command: 'run', id: 'b', code: 'print("started")' });
    expect(await b.next(e => e.event === 'run-done')).toMatchObject({
      result: { status: 'success' },
    });
    b.send({ command: 'close' });
    await b.next(e => e.event === 'closed');
    expect(await b.exited).toBe(0);
    expect(await byInstance(readyB.instanceId as string)).toEqual([]);

    // Everything of A's is still there and working; its run is still going.
    expect(await a.next(e => e.event === 'run-done', 0).catch(() => 'still running')).toBe(
      'still running',
    );
    const stillThere = new Set((await byInstance(readyA.instanceId as string)).map(c => c.id));
    for (const { id } of ownedByA) expect(stillThere.has(id)).toBe(true);
    expect(await a.next(e => e.event === 'run-done')).toMatchObject({
      result: { status: 'success', stdout: 'started\ndone\n' },
    });
    a.send({ command: 'read' });
    expect(await a.next(e => e.event === 'read')).toMatchObject({ text: 'kept by A' });
    a.send({ command: 'status' });
    expect(await a.next(e => e.event === 'status')).toMatchObject({ warm: 2 });

    // A crashes with a short-lived session open. C (a new replica) leaves A's live containers
    // alone and removes the session's once it has expired (its periodic sweep, not only the
    // start-up one).
    a.send({ command: 'session', content: 'short', ttlMs: 3_000 });
    await a.next(e => e.event === 'session-ready');
    const beforeCrash = await byInstance(readyA.instanceId as string);
    a.kill();
    await a.exited;
    const c = new Replica();
    replicas.push(c);
    const readyC = await c.next(e => e.event === 'ready');
    instances.push(readyC.instanceId as string);
    const shortSession = beforeCrash.filter(c => c.kind === 'session');
    await vi.waitFor(
      async () => {
        const left = new Set((await byInstance(readyA.instanceId as string)).map(c => c.id));
        // Of A's two sessions the hour-long one stays; the 3-second one goes.
        expect(shortSession.filter(s => left.has(s.id))).toHaveLength(1);
        for (const warm of beforeCrash.filter(c => c.kind === 'execute' && c.state === 'running')) {
          expect(left.has(warm.id)).toBe(true);
        }
      },
      { timeout: 30_000, interval: 500 },
    );
    c.send({ command: 'close' });
    await c.next(e => e.event === 'closed');
    expect(await c.exited).toBe(0);
    expect(await byInstance(readyC.instanceId as string)).toEqual([]);
  }, 180_000);
});
