// The sizing part of bench:sandbox: what one warm container costs a host, with and without the
// default pre-imports, for docs/deploy.md. The sandbox's own container (bare dockerode calls,
// its spec and command; see engine-floor.ts) is started `starts` times one after another and
// measured once its bootstrap waits for code:
// - containerCpuSeconds: CPU time in the container's cgroup (gVisor's sentry and gofer, the
//   supervisor and bootstrap, the pre-imports), from `docker stats`;
// - runtimeCpuSeconds: its containerd shim and the runsc commands the shim ran and reaped
//   (create, start), from /proc;
// - engineCpuSeconds: dockerd and containerd meanwhile (shared with anyone else using the
//   engine: on a busy engine this is an upper bound);
// - cpuSecondsPerStart: the three together (medians); per pre-import: with minus without;
// - idleMiB: each idle container, as docker stats counts it (see idle-memory.ts).
// Removal is not included (it happens after the container's work).
import type Docker from 'dockerode';
import { DEFAULT_PREIMPORT } from '../src/sandbox/options/default-image.ts';
import { INSTANCE_LABEL } from '../src/sandbox/driver/labels.ts';
import { type BareContainer, bareContainerSpec, startBare } from './engine-floor.ts';
import { idleMiB } from './idle-memory.ts';
import { engineProcesses, findProcesses, processCpuSeconds } from './proc-cpu.ts';
import { percentile, round } from './sandbox-cases.ts';

const sum = (pids: number[], children = false) =>
  pids.reduce((total, pid) => total + (processCpuSeconds({ pid, children }) ?? 0), 0);

/**
 * Starts `starts` containers with and without pre-imports; returns one row per setting and one
 * with the pre-imports' cost.
 *
 * @example
 * ```ts
 * for (const row of await benchSizing({ docker, image, runtime: 'runsc', starts: 6 })) console.log(row);
 * ```
 */
export async function benchSizing({
  docker,
  image,
  runtime,
  starts,
}: {
  /** Docker client (the local engine: its processes are read from /proc). */
  docker: Docker;
  /** The sandbox image. */
  image: string;
  /** The runtime (runsc). */
  runtime: string;
  /** Containers started per setting. */
  starts: number;
}): Promise<Record<string, unknown>[]> {
  const engine = engineProcesses();
  const rows: Record<string, unknown>[] = [];
  for (const preimport of [[], DEFAULT_PREIMPORT]) {
    const spec = bareContainerSpec({ image, runtime, preimport });
    const instanceId = (spec.Labels as Record<string, string>)[INSTANCE_LABEL]!;
    const started: BareContainer[] = [];
    const samples = { ready: [] as number[], container: [] as number[], runtime: [] as number[] };
    const engineCpu: number[] = [];
    try {
      for (let i = 0; i < starts; i++) {
        const engineBefore = sum(engine);
        const began = performance.now();
        const bare = await startBare({ docker, spec, remove: c => c.remove({ force: true }) });
        started.push(bare);
        await bare.ready;
        samples.ready.push(performance.now() - began);
        engineCpu.push(sum(engine) - engineBefore);
        const id = bare.container.id;
        const stats = (await bare.container.stats({
          stream: false,
          'one-shot': true,
        } as never)) as unknown as Docker.ContainerStats;
        samples.container.push(stats.cpu_stats.cpu_usage.total_usage / 1e9);
        samples.runtime.push(sum(findProcesses(['containerd-shim', id]), true));
      }
      // Idle for a moment, so start-up allocations that are freed again do not count.
      await new Promise(resolve => setTimeout(resolve, 2_000));
      const idle = await idleMiB(docker, { instanceId });
      const median = (xs: number[]) => percentile(xs, 0.5);
      const perStart = median(samples.container) + median(samples.runtime) + median(engineCpu);
      rows.push({
        bench: 'sizing',
        preimport: preimport.length > 0,
        modules: preimport.join(','),
        starts,
        startToReadyP50Ms: round(median(samples.ready)),
        containerCpuSeconds: round2(median(samples.container)),
        runtimeCpuSeconds: round2(median(samples.runtime)),
        engineCpuSeconds: round2(median(engineCpu)),
        cpuSecondsPerStart: round2(perStart),
        idleMiB: round(idle),
      });
    } finally {
      await Promise.all(
        started.map(({ container, socket }) => {
          socket.destroy();
          return container.remove({ force: true });
        }),
      );
    }
  }
  const [bare, preimported] = rows as [Record<string, number>, Record<string, number>];
  rows.push({
    bench: 'sizing',
    case: 'preimport-cost',
    cpuSecondsPerPreimport: round2(preimported.cpuSecondsPerStart! - bare.cpuSecondsPerStart!),
    extraIdleMiB: round(preimported.idleMiB! - bare.idleMiB!),
  });
  return rows;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
