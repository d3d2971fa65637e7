import { SandboxUnavailableError } from '../../errors/sandbox-unavailable-error.ts';
import type { BoxStream } from '../driver/box-stream.ts';
import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import type { ContainerLimits, EngineDriver } from '../driver/engine-driver.ts';
import { PLACEMENT_LABEL } from '../driver/labels.ts';
import { pythonSource } from '../in-container/python-source.ts';
import type { ResolvedConversationOptions } from '../options/conversation-options.ts';
import { CellFrameParser, READY_FRAME, encodeHello } from './cell-protocol.ts';

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

/**
 * Creates and starts a conversation interpreter: a hardened container (the sandbox's limits,
 * runsc, no network, uid 65534) whose supervisor adopts `secret` and whose kernel has done its
 * pre-imports when this resolves. On Docker the stream is attached before the start, so the
 * ready frame cannot be missed; attached to a running pod (Kubernetes), a ready frame from before
 * the attach is found in the pod's early output. On failure the box is handed to `cleanup`.
 *
 * @example
 * ```ts
 * const id = await startInterpreter({ driver, limits, labels, secret, ttlMs, idleMs: 600_000, preimport: [], startTimeoutMs: 60_000, cleanup });
 * ```
 */
export async function startInterpreter({
  driver,
  limits,
  labels,
  secret,
  ttlMs,
  idleMs,
  preimport,
  startTimeoutMs,
  cleanup,
  abortSignal,
}: {
  /** The engine. */
  driver: EngineDriver;
  /** Image, runtime and resource limits (the interpreter's own memory and pids). */
  limits: ContainerLimits;
  /** Extra labels on the container. */
  labels: Record<string, string>;
  /**
   * The interpreter's secret: only requests carrying it are served. None: a waiting interpreter
   * of a shared pool, whose taker sends its own (`sendHello`).
   */
  secret: string | undefined;
  /** Hard bound of the container's life. */
  ttlMs: number;
  /** The supervisor exits after this long without a cell. */
  idleMs: number;
  /** Modules imported before the first cell. */
  preimport: readonly string[];
  /** Deadline for the kernel to be ready (pre-imports take seconds under gVisor). */
  startTimeoutMs: number;
  /** Removes the container if starting fails. */
  cleanup: CleanupTracker;
  /** Aborting stops the start and removes the container. */
  abortSignal?: AbortSignal;
}): Promise<string> {
  const { id, stream } = await driver.startBox(
    {
      limits: { ...limits, labels: { ...limits.labels, ...labels } },
      cmd: interpreterCommand({ ttlMs, idleMs, preimport }),
      ttlMs,
      kind: 'conversation',
      stdinOnce: false,
      // Subprocesses the cells start and leave behind must be reaped over a long life.
      init: true,
    },
    { cleanup, abortSignal },
  );
  try {
    const ready = waitForReady({ stream, timeoutMs: startTimeoutMs, abortSignal });
    // Awaited below; until then a rejection (an abort during the start) must not go unhandled.
    ready.promise.catch(() => {});
    // Flushed before the stream is destroyed below: `ready` does not wait for the hello, and a
    // destroyed stream drops what it still buffers, leaving an interpreter that serves no one.
    if (secret !== undefined) await writeHello(stream, secret);
    if (!driver.streamsFromStart) {
      // The ready frame may have gone before the attach: then it is in what the box wrote.
      const early = await driver.earlyOutput(id).catch(() => Buffer.alloc(0));
      if (early.includes(READY_FRAME)) ready.done();
    }
    await ready.promise;
    return id;
  } catch (error) {
    void cleanup.remove(id);
    throw error;
  } finally {
    stream.destroy();
  }
}

/**
 * `startInterpreter` on `engine` with the conversations' limits (memory, pids, /tmp), life and
 * idle expiry, under the placement `placement` (its label).
 *
 * @example
 * ```ts
 * const id = await startOnEngine({ engine, options, placement: reservation.id, secret, preimport });
 * ```
 */
export function startOnEngine({
  engine,
  options,
  placement,
  labels = {},
  secret,
  preimport,
  abortSignal,
}: {
  /** Where it runs. */
  engine: {
    driver: EngineDriver;
    limits: ContainerLimits | undefined;
    cleanup: CleanupTracker;
  };
  /** The conversations' options. */
  options: Pick<
    ResolvedConversationOptions,
    'memoryBytes' | 'pidsLimit' | 'tmpfsMiB' | 'maxLifeMs' | 'idleMs' | 'startTimeoutMs'
  >;
  /** Its placement id. */
  placement: string;
  /** More labels. */
  labels?: Record<string, string>;
  /** Its secret (none: a waiting interpreter of a shared pool). */
  secret: string | undefined;
  /** Modules imported before the first cell. */
  preimport: readonly string[];
  /** Stops the start. */
  abortSignal?: AbortSignal | undefined;
}): Promise<string> {
  const { memoryBytes, pidsLimit, tmpfsMiB } = options;
  return startInterpreter({
    driver: engine.driver,
    limits: { ...engine.limits!, memoryBytes, pidsLimit, tmpfsMiB },
    labels: { ...labels, [PLACEMENT_LABEL]: placement },
    ...{ secret, preimport, ...(abortSignal ? { abortSignal } : {}) },
    ttlMs: options.maxLifeMs,
    idleMs: options.idleMs,
    startTimeoutMs: options.startTimeoutMs,
    cleanup: engine.cleanup,
  });
}

function writeHello(stream: BoxStream, secret: string): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    stream.write(encodeHello(secret), error => (error ? reject(error) : resolve())),
  );
}

/**
 * Gives a waiting interpreter (started without a secret) its secret: the supervisor adopts the
 * first hello it reads, so only the replica whose claim won may send one.
 *
 * @example
 * ```ts
 * await sendHello({ driver, id, secret });
 * ```
 */
export async function sendHello({
  driver,
  id,
  secret,
}: {
  /** The interpreter's engine. */
  driver: EngineDriver;
  /** Its box. */
  id: string;
  /** The secret its conversation's handle will carry. */
  secret: string;
}): Promise<void> {
  const stream = await driver.attach(id);
  try {
    await writeHello(stream, secret);
  } finally {
    stream.destroy();
  }
}

/**
 * Resolves on the supervisor's `ready` frame (or `done()`); rejects when the stream ends first
 * or time is up.
 */
function waitForReady({
  stream,
  timeoutMs,
  abortSignal,
}: {
  stream: BoxStream;
  timeoutMs: number;
  abortSignal?: AbortSignal | undefined;
}): { promise: Promise<void>; done(): void } {
  let settle: (error?: unknown) => void = () => {};
  const promise = new Promise<void>((resolve, reject) => {
    let stderr = '';
    const parser = new CellFrameParser({
      requestId: '-',
      allowRecord: () => false,
      onFrame: frame => frame.type === 'ready' && done(),
    });
    const onOutput = (which: 'stdout' | 'stderr', payload: Buffer) => {
      if (which === 'stderr') {
        if (stderr.length < MAX_STARTUP_STDERR) stderr += payload.toString('utf8');
      } else if (!parser.push(payload)) {
        done(failure(`it broke the protocol (${parser.error})`));
      }
    };
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
    let settled = false;
    let unwatch = () => {};
    function done(error?: unknown): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      abortSignal?.removeEventListener('abort', onAbort);
      unwatch();
      if (error === undefined) resolve();
      else reject(error);
    }
    settle = done;
    abortSignal?.addEventListener('abort', onAbort, { once: true });
    if (abortSignal?.aborted) onAbort();
    stream.onOutput(onOutput);
    unwatch = stream.onEnd(() => done(failure('it exited during start-up')));
  });
  return { promise, done: () => settle() };
}
