// The engine floor of bench:sandbox: what the Docker engine sustains for one-use containers run
// the way the sandbox runs them, by bare dockerode calls and none of the sandbox's code. Like
// for like with `DockerSandbox({ warmPoolSize: 4, maxConcurrentExecutions: 4, preimport: [] })`:
// - the same container: containerSpec with the sandbox's default limits, image and runtime, and
//   the same command (`timeout -s KILL <ttl> python3 -c SUPERVISOR BOOTSTRAP`);
// - the same pipelining: a pool of `poolSize` containers started ahead with at most
//   `maxConcurrentStarts` starts in flight, refilled as containers are taken (for waiting callers
//   first), so starts overlap runs; `callers` runs at once, each holding one of `callers` slots;
// - the same run: attached with stdin before start, the run input written to stdin, the result
//   taken when the supervisor's done marker has arrived on both streams;
// - the same teardown: force-removal right after the marker; with `holdSlotUntilRemoved` (as the
//   sandbox does) the slot is given back once the container is gone, without it at the marker;
// - timed the same way (see closed-loop.ts).
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import {
  READY_MARKER,
  bootstrapCommand,
  createNonce,
  encodeRunInput,
} from '../src/sandbox/in-container/bootstrap.ts';
import { containerSpec } from '../src/sandbox/docker/container-spec.ts';
import { resolveDockerSandboxOptions } from '../src/sandbox/options/docker-sandbox-options.ts';
import { FrameDemuxer } from '../src/sandbox/docker/frame-demuxer.ts';
import { INSTANCE_LABEL } from '../src/sandbox/driver/labels.ts';
import { resolveRecordCaps } from '../src/sandbox/output/record-budget.ts';
import { type ClosedLoopResult, closedLoop } from './closed-loop.ts';

/** A bare container, attached and started, with what it printed so far. */
export type BareContainer = {
  container: Docker.Container;
  socket: Duplex;
  stdout: string;
  stderr: string;
  /** Settles once the bootstrap waits for code (its ready marker on stderr). */
  ready: Promise<void>;
};

/**
 * The sandbox's container for a one-use run, with its default limits: what `DockerSandbox`
 * creates for its warm pool, labelled with a bench instance of its own.
 *
 * @example
 * ```ts
 * const spec = bareContainerSpec({ image, runtime: 'runsc', preimport: [] });
 * ```
 */
export function bareContainerSpec({
  image,
  runtime,
  preimport,
}: {
  /** The sandbox image. */
  image: string;
  /** The runtime (runsc). */
  runtime: string;
  /** Modules the bootstrap imports before it waits for code. */
  preimport: readonly string[];
}): Docker.ContainerCreateOptions {
  const options = resolveDockerSandboxOptions({ image, preimport: [] });
  // A pool container may idle up to warmMaxAgeMs, then run up to maxTimeoutMs (as the sandbox's).
  const ttlMs = options.warmMaxAgeMs + options.maxTimeoutMs + 60_000;
  return containerSpec({
    limits: {
      image,
      runtime,
      memoryBytes: options.memoryBytes,
      cpus: options.cpus,
      pidsLimit: options.pidsLimit,
      tmpfsMiB: options.tmpfsMiB,
      // Labelled like the sandbox's, so the bench's leak check sees them too.
      labels: { [INSTANCE_LABEL]: `bench-${randomUUID()}` },
    },
    cmd: bootstrapCommand({ ttlMs, preimport }),
    ttlMs,
    kind: 'execute',
    openStdin: true,
  });
}

/**
 * Creates, attaches to (stdin included) and starts a container, as the sandbox does; `remove`
 * takes it if starting fails half-way.
 *
 * @example
 * ```ts
 * const bare = await startBare({ docker, spec, remove: c => c.remove({ force: true }) });
 * await bare.ready;
 * ```
 */
export async function startBare({
  docker,
  spec,
  remove,
}: {
  /** Docker client. */
  docker: Docker;
  /** What to create. */
  spec: Docker.ContainerCreateOptions;
  /** Removes a container whose start failed. */
  remove: (container: Docker.Container) => unknown;
}): Promise<BareContainer> {
  const container = await docker.createContainer(spec);
  try {
    const socket = (await container.attach({
      stream: true,
      stdin: true,
      stdout: true,
      stderr: true,
      hijack: true,
    })) as Duplex;
    let onReady = () => {};
    const ready = new Promise<void>(resolve => (onReady = resolve));
    const bare: BareContainer = { container, socket, stdout: '', stderr: '', ready };
    const readyMarker = READY_MARKER.toString('latin1');
    const demuxer = new FrameDemuxer({
      onPayload: (stream, payload) => {
        bare[stream] += payload.toString('latin1');
        if (stream === 'stderr' && bare.stderr.startsWith(readyMarker)) onReady();
      },
    });
    socket.on('data', (data: Buffer) => demuxer.push(data));
    socket.on('error', () => {});
    await container.start();
    return bare;
  } catch (error) {
    remove(container);
    throw error;
  }
}

/**
 * Runs `print(1)` through bare containers in a closed loop; returns the steady-state throughput.
 *
 * @example
 * ```ts
 * const { perSec } = await engineFloor({ docker, image, runtime: 'runsc', seconds: 10, warmupRuns: 8 });
 * ```
 */
export async function engineFloor({
  docker,
  image,
  runtime,
  callers = 4,
  poolSize = 4,
  maxConcurrentStarts = 2,
  holdSlotUntilRemoved = true,
  seconds,
  warmupRuns,
}: {
  /** Docker client. */
  docker: Docker;
  /** The sandbox image. */
  image: string;
  /** The runtime the sandbox uses (runsc). */
  runtime: string;
  /** Runs at once (the sandbox's callers and `maxConcurrentExecutions`). */
  callers?: number;
  /** Containers started ahead (`warmPoolSize`). */
  poolSize?: number;
  /** Starts in flight at once (`maxConcurrentStarts`). */
  maxConcurrentStarts?: number;
  /** Give a run's slot back once its container is gone (the sandbox's way), not at its marker. */
  holdSlotUntilRemoved?: boolean;
  /** Length of the measured window. */
  seconds: number;
  /** Runs before the window opens. */
  warmupRuns: number;
}): Promise<ClosedLoopResult> {
  const options = resolveDockerSandboxOptions({ image, preimport: [] });
  const spec = bareContainerSpec({ image, runtime, preimport: [] });
  const caps = resolveRecordCaps({
    images: options.maxImages,
    files: options.maxOutputFiles,
    bytes: options.maxArtifactBytes,
  });
  const removals = new Set<Promise<void>>();
  let removalError: { error: unknown } | undefined;
  // Settles once the container is gone; a failed removal fails the measurement at its end.
  const remove = (container: Docker.Container): Promise<void> => {
    const removal: Promise<void> = container
      .remove({ force: true, v: true })
      .then(
        () => undefined,
        (error: unknown) => void (removalError ??= { error }),
      )
      .finally(() => removals.delete(removal));
    removals.add(removal);
    return removal;
  };

  const start = () => startBare({ docker, spec, remove });

  // The warm pool: FIFO, refilled up to poolSize plus waiting callers, maxConcurrentStarts at once.
  const idle: BareContainer[] = [];
  const waiters: { resolve: (c: BareContainer) => void; reject: (e: unknown) => void }[] = [];
  let starting = 0;
  let closed = false;
  const pump = (): void => {
    while (
      !closed &&
      starting < maxConcurrentStarts &&
      idle.length + starting < poolSize + waiters.length
    ) {
      starting++;
      start().then(
        container => {
          starting--;
          const waiter = waiters.shift();
          if (closed) void remove(container.container);
          else if (waiter) waiter.resolve(container);
          else idle.push(container);
          pump();
        },
        (error: unknown) => {
          starting--;
          waiters.shift()?.reject(error);
          pump();
        },
      );
    }
  };
  const acquire = (): Promise<BareContainer> => {
    const ready = idle.shift();
    const taken = ready
      ? Promise.resolve(ready)
      : new Promise<BareContainer>((resolve, reject) => waiters.push({ resolve, reject }));
    pump();
    return taken;
  };

  // Slots: a run holds one from before it takes a container until its container is gone.
  let free = callers;
  const slotWaiters: (() => void)[] = [];
  const takeSlot = async (): Promise<void> => {
    if (free > 0) free--;
    else await new Promise<void>(resolve => slotWaiters.push(resolve));
  };
  const giveSlot = (): void => {
    const next = slotWaiters.shift();
    if (next) next();
    else free++;
  };

  const once = async (): Promise<void> => {
    await takeSlot();
    const started = await acquire();
    const proof = createNonce();
    const done = `\0ai-toolbelt:${proof}:`;
    const input = encodeRunInput({
      proof,
      nonce: createNonce(),
      code: 'print(1)',
      files: [],
      caps,
    });
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (started.stdout.includes(done) && started.stderr.includes(done)) resolve();
      };
      // After the demuxer's own listener, so the output is already in.
      started.socket.on('data', check);
      started.socket.once('close', () => {
        check();
        reject(new Error(`engine floor run ended without its marker: ${started.stderr}`));
      });
      for (const chunk of input.slice(0, -1)) started.socket.write(chunk);
      started.socket.end(input.at(-1));
    });
    started.socket.destroy();
    if (!started.stdout.startsWith('1\n'))
      throw new Error(`engine floor: stdout ${JSON.stringify(started.stdout)}`);
    const removal = remove(started.container);
    if (holdSlotUntilRemoved) void removal.then(giveSlot);
    else giveSlot();
  };

  pump();
  try {
    return await closedLoop({ callers, warmupRuns, seconds, run: once });
  } finally {
    closed = true;
    for (const container of idle.splice(0)) void remove(container.container);
    while (starting > 0 || removals.size > 0) {
      await Promise.allSettled([...removals]);
      await new Promise(resolve => setTimeout(resolve, 20));
    }
    if (removalError) throw removalError.error;
  }
}
