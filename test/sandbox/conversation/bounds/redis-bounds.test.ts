// Interpreter bounds across replicas that share a real redis-server store (issue 45, item 6): two
// DockerSandbox instances placing at the same instant never pass maxInterpreters, maxPerEngine or
// maxPerUser (the live containers are sampled from the engine throughout), and a replica killed
// while it starts an interpreter gives its room back when its lease expires.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createStorage, type Storage } from 'unstorage';
import redisDriver from 'unstorage/drivers/redis';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { SandboxBusyError } from '../../../../src/errors/sandbox-busy-error.ts';
import {
  INSTANCE_LABEL,
  KIND_LABEL,
  SANDBOX_LABEL,
  SCOPE_LABEL,
} from '../../../../src/sandbox/driver/labels.ts';
import { type ConversationOptions, DockerSandbox } from '../../../../src/sandbox/index.ts';
import {
  type RedisServer,
  describeRedis,
  startRedisServer,
} from '../../../helpers/redis-server.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  expectNoLeakedContainers,
} from '../../sandbox-availability.ts';
import { peakDuring } from './peak-during.ts';

const KEY = 'bounds-test-key-0123456789abcdef0123';

/** Conversation interpreters of `scope` in `status` (every replica's), from the engine's labels. */
async function interpreters(
  scope: string,
  { status = ['created', 'running'], instance }: { status?: string[]; instance?: string } = {},
) {
  const label = [SANDBOX_LABEL, `${KIND_LABEL}=conversation`, `${SCOPE_LABEL}=${scope}`];
  if (instance !== undefined) label.push(`${INSTANCE_LABEL}=${instance}`);
  return await docker.listContainers({ all: true, filters: { label, status } });
}

/** The most interpreters of `scope` live at once while `work` runs (the engine polled throughout). */
const peakOf = <T>(scope: string, work: () => Promise<T>) =>
  peakDuring(async () => (await interpreters(scope)).length, work);

describeRedis('interpreter bounds across replicas on Redis', () => {
  describeSandbox('two replicas sharing one redis-server store', () => {
    let redis: RedisServer;
    const opened: Array<{ sandbox: DockerSandbox; store: Storage }> = [];
    let scopes = 0;

    /** Two replicas of one app (one scope, one store on Redis, each with its own client). */
    const replicas = async (conversations: ConversationOptions) => {
      const scope = `bounds-${process.pid}-${++scopes}`;
      const pair = await Promise.all(
        [0, 1].map(async () => {
          const store = createStorage({ driver: redisDriver({ url: redis.url }) });
          const sandbox = await DockerSandbox.create({
            ...{ image: SANDBOX_IMAGE, docker, warmPoolSize: 0, preimport: [], scope },
            conversations: { store, encryptionKey: KEY, warmPoolSize: 0, ...conversations },
          });
          opened.push({ sandbox, store });
          return sandbox;
        }),
      );
      return { scope, a: pair[0]!, b: pair[1]! };
    };

    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      for (const { sandbox, store } of opened) {
        await sandbox.close();
        await store.dispose();
      }
      await redis?.stop();
      await expectNoLeakedContainers();
    });

    it('twelve users at once on two replicas against maxInterpreters 4: never more than 4 live', async () => {
      const { scope, a, b } = await replicas({ maxInterpreters: 4, maxPerEngine: 4 });
      const [results, peak] = await peakOf(scope, () =>
        Promise.allSettled(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 === 0 ? a : b).executeCell('x = 1', {
              conversation: { id: `chat-${i}`, userId: `user-${i}` },
            }),
          ),
        ),
      );
      const refused = results.filter(result => result.status === 'rejected');
      for (const { reason } of refused) {
        expect(SandboxBusyError.isInstance(reason), String(reason)).toBe(true);
        expect(reason).toMatchObject({ resource: 'interpreters', limit: 4, retryAfterMs: 5_000 });
      }
      expect(peak).toBeLessThanOrEqual(4);
      expect(results.length - refused.length).toBe(4);
      expect((await interpreters(scope)).length).toBe(4);
    }, 180_000);

    it('past maxPerEngine, replicas evict idle interpreters to place: never more than 2 live', async () => {
      const { scope, a, b } = await replicas({ maxInterpreters: 8, maxPerEngine: 2 });
      const cell = (sandbox: DockerSandbox, user: string) =>
        sandbox.executeCell('x = 1', { conversation: { id: `chat-${user}`, userId: user } });
      await cell(a, 'ann');
      await cell(b, 'bob');
      // Six users at once: the first ones each evict one of the two idle interpreters; the
      // others find both busy (running their first cell) or starting, and are refused.
      const [results, peak] = await peakOf(scope, () =>
        Promise.allSettled(
          ['cat', 'dan', 'eve', 'fay', 'gus', 'hal'].map((user, i) => cell(i % 2 ? b : a, user)),
        ),
      );
      const served = results.filter(result => result.status === 'fulfilled');
      for (const result of results) {
        if (result.status === 'fulfilled') expect(result.value.status).toBe('success');
        else expect(result.reason).toMatchObject({ resource: 'interpreters', limit: 2 });
      }
      expect(served.length).toBeGreaterThanOrEqual(2);
      expect(peak).toBeLessThanOrEqual(2);
      expect((await interpreters(scope)).length).toBeLessThanOrEqual(2);
    }, 180_000);

    it('past maxPerUser, one user on both replicas at once keeps at most 2 live', async () => {
      const { scope, a, b } = await replicas({
        maxInterpreters: 8,
        maxPerEngine: 8,
        maxPerUser: 2,
      });
      const cell = (sandbox: DockerSandbox, id: string) =>
        sandbox.executeCell('x = 1', { conversation: { id, userId: 'carol' } });
      await cell(a, 'first');
      await cell(b, 'second');
      const [results, peak] = await peakOf(scope, () =>
        Promise.all([cell(a, 'third'), cell(b, 'fourth')]),
      );
      expect(results.map(result => result.status)).toEqual(['success', 'success']);
      expect(peak).toBeLessThanOrEqual(2);
      expect((await interpreters(scope)).length).toBe(2);
    }, 180_000);

    it('a replica killed while it starts an interpreter gives its room back when its lease expires', async () => {
      const { scope, a } = await replicas({ maxInterpreters: 1, maxPerEngine: 1 });
      // The other replica: its own process, placing one interpreter (with the default
      // pre-imports, so its start takes seconds after the container exists).
      const fixture = fileURLToPath(new URL('../../fleet/placing-replica.ts', import.meta.url));
      const child = spawn(process.execPath, [fixture, redis.url, KEY, scope], {
        env: { ...process.env, AI_TOOLBELT_SANDBOX_IMAGE: SANDBOX_IMAGE },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = once(child, 'exit');
      const [instance] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      let killedAt = 0;
      try {
        // Killed as soon as its interpreter exists, long before that interpreter is ready.
        await vi.waitFor(
          async () => expect(await interpreters(scope, { instance })).toHaveLength(1),
          { timeout: 60_000, interval: 20 },
        );
        child.kill('SIGKILL');
        killedAt = Date.now();
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        await exited;
        // What a crashed replica leaves running is gone at its TTL; here, at once (a create the
        // engine was still making when the replica died can answer 404 for a moment).
        await vi.waitFor(
          async () => {
            const left = await interpreters(scope, { instance, status: [] });
            const remove = (id: string) => docker.getContainer(id).remove({ force: true });
            await Promise.all(left.map(info => remove(info.Id).catch(() => {})));
            expect(await interpreters(scope, { instance, status: [] })).toEqual([]);
          },
          { timeout: 30_000, interval: 200 },
        );
      }
      const cell = () =>
        a.executeCell('print(1)', { conversation: { id: 'after', userId: 'eve' } });
      // Its reservation still holds the only room: the dead replica never confirmed it.
      await expect(cell()).rejects.toSatisfy(error => SandboxBusyError.isInstance(error));
      // Tried again until placed: busy until the lease has expired.
      const placed = await vi.waitFor(cell, { timeout: 60_000, interval: 500 });
      expect(placed).toMatchObject({ status: 'success', stdout: '1\n' });
      // Back within the start lease (15 s) and its last renewal, not at the interpreter's TTL.
      expect(Date.now() - killedAt).toBeLessThan(30_000);
      expect((await interpreters(scope)).length).toBe(1);
    }, 180_000);
  });
});
