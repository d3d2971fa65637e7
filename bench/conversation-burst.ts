// Conversation interpreters under a burst: `conversations` users each open a conversation at the
// same instant (their first cell, `print(1)`), spread over two replicas (two DockerSandbox
// instances, each with its own client of one redis-server store: the interpreter bounds are
// reserved in Redis) against `maxInterpreters`: the most interpreters live at any time (sampled
// from the engine while the burst runs), how many were refused (`SandboxBusyError`), the p95 of
// the served first cells, the host's memory peak over its level before the burst (MemTotal -
// MemAvailable, sampled), and the containers left after close(). Then the same burst with the two
// replicas sharing a store without Redis (unstorage's memory driver), where each counts by itself:
// `withoutRedis`.
import { readFileSync } from 'node:fs';
import type Docker from 'dockerode';
import { type Storage, createStorage } from 'unstorage';
import redisDriver from 'unstorage/drivers/redis';
import { SandboxBusyError } from '../src/errors/sandbox-busy-error.ts';
import { KIND_LABEL, SANDBOX_LABEL, SCOPE_LABEL } from '../src/sandbox/driver/labels.ts';
import { DockerSandbox } from '../src/sandbox/index.ts';
import { startRedisServer } from '../test/helpers/redis-server.ts';

const REPLICAS = 2;

const percentile = (xs: number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};

/** Memory in use on the host, MiB (MemTotal - MemAvailable). */
function hostMemoryMiB(): number {
  const info = readFileSync('/proc/meminfo', 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(info)![1]);
  return (field('MemTotal') - field('MemAvailable')) / 1024;
}

/** One JSON row: a burst of new conversations over two replicas against the interpreter bound. */
export async function benchConversationBurst({
  docker,
  image,
  conversations = 50,
  maxInterpreters = 8,
}: {
  /** Docker client. */
  docker: Docker;
  /** The sandbox image. */
  image: string;
  /** Users opening a conversation at once. */
  conversations?: number;
  /** The bound they meet. */
  maxInterpreters?: number;
}): Promise<Record<string, unknown>> {
  const redis = await startRedisServer();
  const options = { docker, image, conversations, maxInterpreters };
  try {
    const clients = Array.from({ length: REPLICAS }, () =>
      createStorage({ driver: redisDriver({ url: redis.url }) }),
    );
    const onRedis = await burst({ ...options, stores: clients, name: 'redis' }).finally(() =>
      Promise.all(clients.map(store => store.dispose())),
    );
    const shared = createStorage();
    const { liveMax, served, busy, failed } = await burst({
      ...options,
      stores: Array.from({ length: REPLICAS }, () => shared),
      name: 'memory',
    });
    return {
      bench: 'conversation-burst',
      ...{ conversations, maxInterpreters, maxConcurrentStarts: 2, replicas: REPLICAS },
      store: 'redis',
      ...onRedis,
      withoutRedis: { store: 'memory', liveMax, served, busy, failed },
    };
  } finally {
    await redis.stop();
  }
}

async function burst({
  docker,
  image,
  conversations,
  maxInterpreters,
  stores,
  name,
}: {
  docker: Docker;
  image: string;
  conversations: number;
  maxInterpreters: number;
  /** One store per replica (clients of one Redis, or one store shared). */
  stores: Storage[];
  name: string;
}) {
  const scope = `burst-${name}-${process.pid}`;
  const replicas = await Promise.all(
    stores.map(store =>
      DockerSandbox.create({
        ...{ image, docker, warmPoolSize: 0, scope },
        conversations: {
          ...{ store, encryptionKey: 'burst-bench-key-0123456789abcdef0123' },
          ...{ maxInterpreters, maxPerEngine: maxInterpreters, warmPoolSize: 0 },
        },
      }),
    ),
  );
  const labels = [SANDBOX_LABEL, `${KIND_LABEL}=conversation`, `${SCOPE_LABEL}=${scope}`];
  const live = async (status: string[]) =>
    (await docker.listContainers({ all: true, filters: { label: labels, status } })).length;
  const baseline = hostMemoryMiB();
  let liveMax = 0;
  let memoryPeak = baseline;
  let bursting = true;
  const sampling = (async () => {
    while (bursting) {
      liveMax = Math.max(liveMax, await live(['created', 'running']));
      memoryPeak = Math.max(memoryPeak, hostMemoryMiB());
    }
  })();
  const firstCells: number[] = [];
  let busy = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: conversations }, async (_, i) => {
      const started = performance.now();
      try {
        const result = await replicas[i % replicas.length]!.executeCell('print(1)', {
          conversation: { id: `burst-${i}`, userId: `user-${i}` },
        });
        if (result.status !== 'success') failed++;
        else firstCells.push(performance.now() - started);
      } catch (error) {
        if (SandboxBusyError.isInstance(error)) busy++;
        else failed++;
      }
    }),
  );
  bursting = false;
  await sampling;
  await Promise.all(replicas.map(replica => replica.close()));
  return {
    liveMax,
    served: firstCells.length,
    busy,
    failed,
    firstCellP50Ms: Math.round(percentile(firstCells, 0.5)),
    firstCellP95Ms: Math.round(percentile(firstCells, 0.95)),
    hostMemoryPeakMiB: Math.round(memoryPeak - baseline),
    leftAfterClose: await live(['created', 'running', 'exited', 'paused', 'restarting', 'dead']),
  };
}
