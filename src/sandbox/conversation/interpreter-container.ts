import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import type { CleanupTracker } from '../docker/cleanup-tracker.ts';
import { containerSpec, type ContainerLimits } from '../docker/container-spec.ts';
import { createContainer } from '../docker/create-container.ts';
import { dockerCall } from '../docker/docker-call.ts';
import { FrameDemuxer } from '../docker/frame-demuxer.ts';
import { pythonSource } from '../in-container/python-source.ts';
import { CellFrameParser, encodeHello } from './cell-protocol.ts';

/** Stderr kept from a supervisor that failed to start (it says why). */
const MAX_STARTUP_STDERR = 4096;

/**
 * The interpreter container's command: the supervisor (which starts the kernel) under
 * `timeout -s KILL`, so the container's life is bounded even if every host is gone.
 */
export function interpreterCommand({
  ttlMs,
  idleMs,
  preimport,
}: {
  /** Hard bound of the container's life. */
  ttlMs: number;
  /** The supervisor exits after this long without a cell. */
  idleMs: number;
  /** Modules the kernel imports before the first cell. */
  preimport: readonly string[];
}): string[] {
  return [
    ...['timeout', '-s', 'KILL', `${Math.max(1, Math.ceil(ttlMs / 1000))}s`],
    ...['python3', '-I', '-S', '-c', pythonSource('interpreter_supervisor')],
    pythonSource('interpreter_kernel'),
    preimport.join(','),
    String(Math.round(idleMs)),
  ];
}

/** Attaches to a container's stdin, stdout and stderr (one cell's channel). */
export async function attachInterpreter({
  container,
  dockerTimeoutMs,
}: {
  /** The interpreter's container. */
  container: Docker.Container;
  /** Deadline of the attach call. */
  dockerTimeoutMs: number;
}): Promise<Duplex> {
  return (await dockerCall({
    operation: 'container attach',
    timeoutMs: dockerTimeoutMs,
    call: abortSignal =>
      container.attach({
        ...{ stream: true, stdin: true, stdout: true, stderr: true, hijack: true },
        abortSignal,
      }),
  })) as Duplex;
}

/**
 * Creates and starts a conversation interpreter: a hardened container (the sandbox's limits,
 * runsc, no network, uid 65534) whose supervisor adopts `secret` and whose kernel has done its
 * pre-imports when this resolves. Attaches before starting, so the ready frame cannot be
 * missed. On failure the container is handed to `cleanup`.
 *
 * @example
 * ```ts
 * const container = await startInterpreter({ docker, limits, labels, secret, ttlMs, idleMs: 600_000, preimport: [], dockerTimeoutMs: 15_000, startTimeoutMs: 60_000, cleanup });
 * ```
 */
export async function startInterpreter({
  docker,
  limits,
  labels,
  secret,
  ttlMs,
  idleMs,
  preimport,
  dockerTimeoutMs,
  startTimeoutMs,
  cleanup,
  abortSignal,
}: {
  /** The engine's client. */
  docker: Docker;
  /** Image, runtime and resource limits (the interpreter's own memory and pids). */
  limits: ContainerLimits;
  /** Extra labels on the container. */
  labels: Record<string, string>;
  /** The interpreter's secret: only requests carrying it are served. */
  secret: string;
  /** Hard bound of the container's life. */
  ttlMs: number;
  /** The supervisor exits after this long without a cell. */
  idleMs: number;
  /** Modules imported before the first cell. */
  preimport: readonly string[];
  /** Deadline of each Docker call. */
  dockerTimeoutMs: number;
  /** Deadline for the kernel to be ready (pre-imports take seconds under gVisor). */
  startTimeoutMs: number;
  /** Removes the container if starting fails. */
  cleanup: CleanupTracker;
  /** Aborting stops the start and removes the container. */
  abortSignal?: AbortSignal;
}): Promise<Docker.Container> {
  const spec = containerSpec({
    limits: { ...limits, labels: { ...limits.labels, ...labels } },
    cmd: interpreterCommand({ ttlMs, idleMs, preimport }),
    ttlMs,
    kind: 'conversation',
    openStdin: true,
    stdinOnce: false,
    // Subprocesses the cells start and leave behind must be reaped over a long life.
    init: true,
  });
  const container = await createContainer({
    ...{ docker, spec, dockerTimeoutMs, cleanup, ttlMs },
    egress: limits.egress,
  });
  let socket: Duplex | undefined;
  try {
    socket = await attachInterpreter({ container, dockerTimeoutMs });
    const ready = waitForReady({ socket, timeoutMs: startTimeoutMs, abortSignal });
    // Awaited below; until then a rejection (an abort during the start) must not go unhandled.
    ready.catch(() => {});
    await dockerCall({
      operation: 'container start',
      timeoutMs: dockerTimeoutMs,
      call: signal => container.start({ abortSignal: signal }),
    });
    // Flushed before the socket is destroyed below: `ready` does not wait for the hello, and a
    // destroyed socket drops what it still buffers, leaving an interpreter that serves no one.
    const hello = encodeHello(secret);
    await new Promise<void>((resolve, reject) =>
      socket!.write(hello, error => (error ? reject(error) : resolve())),
    );
    await ready;
    return container;
  } catch (error) {
    cleanup.remove(container);
    throw error;
  } finally {
    socket?.destroy();
  }
}

/** Resolves on the supervisor's `ready` frame; rejects when the stream ends first or time is up. */
function waitForReady({
  socket,
  timeoutMs,
  abortSignal,
}: {
  socket: Duplex;
  timeoutMs: number;
  abortSignal?: AbortSignal | undefined;
}): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let stderr = '';
    const parser = new CellFrameParser({
      requestId: '-',
      allowRecord: () => false,
      onFrame: frame => frame.type === 'ready' && done(),
    });
    const demuxer = new FrameDemuxer({
      onPayload: (stream, payload) => {
        if (stream === 'stderr') {
          if (stderr.length < MAX_STARTUP_STDERR) stderr += payload.toString('utf8');
        } else if (!parser.push(payload)) {
          done(failure(`it broke the protocol (${parser.error})`));
        }
      },
    });
    const failure = (why: string) =>
      new SandboxUnavailableError({
        reason: 'interpreter-failed',
        message: `The conversation interpreter did not start: ${why}.${stderr ? ` It said: ${stderr.slice(0, MAX_STARTUP_STDERR).trim()}` : ''}`,
      });
    const timer = setTimeout(
      () =>
        done(failure(`not ready after ${timeoutMs} ms (pre-imports under gVisor take seconds)`)),
      timeoutMs,
    );
    const onAbort = () => done(abortSignal?.reason);
    const onEnd = () => done(failure('it exited during start-up'));
    function done(error?: unknown): void {
      clearTimeout(timer);
      abortSignal?.removeEventListener('abort', onAbort);
      socket.off('end', onEnd).off('close', onEnd).off('error', onEnd);
      // docker-modem leaves the hijacked socket without an error listener: a reset after this
      // must not become an uncaught exception.
      socket.on('error', () => {});
      if (error === undefined) resolve();
      else reject(error);
    }
    abortSignal?.addEventListener('abort', onAbort, { once: true });
    if (abortSignal?.aborted) onAbort();
    socket.on('data', (chunk: Buffer) => demuxer.push(chunk));
    socket.once('end', onEnd).once('close', onEnd).once('error', onEnd);
  });
}
