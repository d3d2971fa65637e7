// Conversation interpreters under a burst: `conversations` users each open a conversation at the
// same instant (their first cell, `print(1)`) against `maxInterpreters`: the most interpreters
// live at any time (sampled from the engine while the burst runs), how many were refused
// (`SandboxBusyError`), the p95 of the served first cells, the host's memory peak over its level
// before the burst (MemTotal - MemAvailable, sampled), and the containers left after close().
import { readFileSync } from 'node:fs';
import type Docker from 'dockerode';
import { SandboxBusyError } from '../src/errors/sandbox-busy-error.ts';
import { INSTANCE_LABEL, KIND_LABEL, SANDBOX_LABEL } from '../src/sandbox/docker/labels.ts';
import { DockerSandbox } from '../src/sandbox/index.ts';

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

/** One JSON row: a burst of new conversations against the interpreter bound. */
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
  const sandbox = await DockerSandbox.create({
    image,
    docker,
    warmPoolSize: 0,
    scope: `burst-${process.pid}`,
    conversations: { maxInterpreters, maxPerEngine: maxInterpreters, warmPoolSize: 0 },
  });
  const labels = [
    SANDBOX_LABEL,
    `${KIND_LABEL}=conversation`,
    `${INSTANCE_LABEL}=${sandbox.instanceId}`,
  ];
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
        const result = await sandbox.executeCell('print(1)', {
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
  await sandbox.close();
  return {
    bench: 'conversation-burst',
    conversations,
    maxInterpreters,
    maxConcurrentStarts: 2,
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
