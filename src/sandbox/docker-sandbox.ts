import Docker from 'dockerode';
import { CodeTooLargeError } from '../errors/code-too-large-error.ts';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { SandboxCleanupError } from '../errors/sandbox-cleanup-error.ts';
import { SandboxClosedError } from '../errors/sandbox-closed-error.ts';
import { checkEngine } from './check-engine.ts';
import { CleanupTracker } from './cleanup-tracker.ts';
import type { ContainerLimits } from './container-spec.ts';
import { runInContainer } from './run-in-container.ts';
import { SandboxContainer } from './sandbox-container.ts';
import { Semaphore } from './semaphore.ts';
import { sweepStaleContainers } from './sweep.ts';
import type { Sandbox, SandboxExecuteOptions, SandboxResult } from './types.ts';
import { WarmPool } from './warm-pool.ts';

/** Options of `DockerSandbox`. Every one has a safe default. */
export type DockerSandboxOptions = {
  /** Docker client; default: from DOCKER_HOST or the local socket. */
  docker?: Docker;
  /** Image with python3 and coreutils' `timeout`; made by scripts/setup-sandbox.sh. */
  image?: string;
  /** Docker runtime; gVisor's `runsc` unless you opt in below. */
  runtime?: string;
  /** Allow running WITHOUT gVisor (plain runc) when runsc is missing. Development only. */
  unsafeAllowRuncRuntime?: boolean;
  /** Memory limit per container, bytes (no swap). */
  memoryBytes?: number;
  /** CPU limit per container, cores. */
  cpus?: number;
  /** pids limit per container; gVisor's own threads count too, so keep it >= 64. */
  pidsLimit?: number;
  /** Size of the writable /tmp, MiB. */
  tmpfsMiB?: number;
  /** Wall-clock limit when `execute` gets none. */
  defaultTimeoutMs?: number;
  /** Largest `timeoutMs` accepted (it also bounds every container's TTL). */
  maxTimeoutMs?: number;
  /** Largest code accepted, UTF-8 bytes. */
  maxCodeBytes?: number;
  /** Output cap per stream, bytes; over it the run is killed (`output-limit`). */
  maxOutputBytes?: number;
  /** Deadline of each Docker API call (create, start, kill, remove...). */
  dockerTimeoutMs?: number;
  /** Containers kept started and waiting for code; 0 makes every run cold. */
  warmPoolSize?: number;
  /** Idle warm containers older than this are replaced. */
  warmMaxAgeMs?: number;
  /** Container starts in flight at once (each start costs ~250 ms of CPU under gVisor). */
  maxConcurrentStarts?: number;
  /** Runs at once; further calls queue. */
  maxConcurrentExecutions?: number;
  /** Remove containers left by crashed processes when the sandbox starts. */
  sweepOnStart?: boolean;
  /** Told about each container that could not be removed (default: a process warning). */
  onCleanupError?: (error: SandboxCleanupError) => void;
};

/**
 * Runs Python in one-use Docker containers under gVisor, hardened as the seed asks (no
 * network, read-only root, noexec /tmp, uid 1000, no capabilities, memory/CPU/pids limits),
 * with a warm pool of pre-started containers. Construction is cheap; the engine is
 * checked on first use (or eagerly with `DockerSandbox.create`).
 *
 * @example
 * ```ts
 * import { DockerSandbox } from 'ai-toolbelt/sandbox';
 * await using sandbox = await DockerSandbox.create({ warmPoolSize: 2 });
 * const result = await sandbox.execute('print(sum(range(10)))', { timeoutMs: 5_000 });
 * console.log(result.status, result.stdout); // success 45
 * ```
 */
export class DockerSandbox implements Sandbox {
  private readonly docker: Docker;
  private readonly options: Required<
    Omit<DockerSandboxOptions, 'docker' | 'onCleanupError' | 'runtime'>
  > & {
    runtime: string;
  };
  private readonly cleanup: CleanupTracker;
  private readonly slots: Semaphore;
  private readonly inFlight = new Map<AbortController, Promise<unknown>>();
  private pool: WarmPool | undefined;
  private readyPromise: Promise<void> | undefined;
  private runtimeInUse: string | undefined;
  private closed = false;

  constructor({
    docker = new Docker(),
    image = 'ai-toolbelt/python:3.11',
    runtime = 'runsc',
    unsafeAllowRuncRuntime = false,
    memoryBytes = 256 * 1024 * 1024,
    cpus = 1,
    pidsLimit = 128,
    tmpfsMiB = 32,
    defaultTimeoutMs = 10_000,
    maxTimeoutMs = 300_000,
    maxCodeBytes = 1_000_000,
    maxOutputBytes = 1024 * 1024,
    dockerTimeoutMs = 15_000,
    warmPoolSize = 2,
    warmMaxAgeMs = 300_000,
    maxConcurrentStarts = 2,
    maxConcurrentExecutions = 4,
    sweepOnStart = true,
    onCleanupError,
  }: DockerSandboxOptions = {}) {
    for (const [argument, value, min] of [
      ['memoryBytes', memoryBytes, 16 * 1024 * 1024],
      ['cpus', cpus, 0.01],
      ['pidsLimit', pidsLimit, 64],
      ['tmpfsMiB', tmpfsMiB, 1],
      ['defaultTimeoutMs', defaultTimeoutMs, 1],
      ['maxTimeoutMs', maxTimeoutMs, 1],
      ['maxCodeBytes', maxCodeBytes, 1],
      ['maxOutputBytes', maxOutputBytes, 1],
      ['dockerTimeoutMs', dockerTimeoutMs, 1],
      ['warmPoolSize', warmPoolSize, 0],
      ['warmMaxAgeMs', warmMaxAgeMs, 1_000],
      ['maxConcurrentStarts', maxConcurrentStarts, 1],
      ['maxConcurrentExecutions', maxConcurrentExecutions, 1],
    ] as const) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
        throw new InvalidArgumentError({ argument, value, message: `must be a number >= ${min}` });
      }
    }
    this.docker = docker;
    this.options = {
      ...{ image, runtime, unsafeAllowRuncRuntime, memoryBytes, cpus, pidsLimit, tmpfsMiB },
      ...{ defaultTimeoutMs, maxTimeoutMs, maxCodeBytes, maxOutputBytes, dockerTimeoutMs },
      ...{ warmPoolSize, warmMaxAgeMs, maxConcurrentStarts, maxConcurrentExecutions, sweepOnStart },
    };
    this.cleanup = new CleanupTracker({ dockerTimeoutMs, onCleanupError });
    this.slots = new Semaphore({ permits: maxConcurrentExecutions });
  }

  /** Creates a sandbox and checks the engine, runtime and image before resolving. */
  static async create(options: DockerSandboxOptions = {}): Promise<DockerSandbox> {
    const sandbox = new DockerSandbox(options);
    await sandbox.ready();
    return sandbox;
  }

  /** The Docker runtime in use (`runsc`), once `ready()` resolved. */
  get runtime(): string | undefined {
    return this.runtimeInUse;
  }

  /** Idle warm containers right now. */
  get warmCount(): number {
    return this.pool?.idleCount ?? 0;
  }

  /**
   * Checks the engine (throws `SandboxUnavailableError` / `SandboxRuntimeMissingError`),
   * sweeps stale containers and starts filling the warm pool. Idempotent.
   */
  ready(): Promise<void> {
    this.readyPromise ??= this.init();
    return this.readyPromise;
  }

  private async init(): Promise<void> {
    const { docker, options } = this;
    const { runtime } = await checkEngine({ docker, ...options });
    this.runtimeInUse = runtime;
    if (options.sweepOnStart) {
      try {
        await sweepStaleContainers({ docker, dockerTimeoutMs: options.dockerTimeoutMs });
      } catch (error) {
        if (!SandboxCleanupError.isInstance(error)) throw error;
        this.cleanup.report(error);
      }
    }
    if (this.closed) throw new SandboxClosedError();
    const limits: ContainerLimits = { ...options, runtime };
    // A warm container may idle up to warmMaxAgeMs and then run up to maxTimeoutMs.
    const ttlMs = options.warmMaxAgeMs + options.maxTimeoutMs + 60_000;
    this.pool = new WarmPool({
      size: options.warmPoolSize,
      maxConcurrentStarts: options.maxConcurrentStarts,
      maxAgeMs: options.warmMaxAgeMs,
      cleanup: this.cleanup,
      start: () =>
        SandboxContainer.start({
          docker,
          limits,
          ttlMs,
          dockerTimeoutMs: options.dockerTimeoutMs,
          cleanup: this.cleanup,
        }),
    });
    this.pool.fill();
  }

  /**
   * Runs Python `code` in a fresh container and resolves with its outcome; see `Sandbox`.
   */
  async execute(code: string, options: SandboxExecuteOptions = {}): Promise<SandboxResult> {
    const { timeoutMs = this.options.defaultTimeoutMs, abortSignal, onOutput } = options ?? {};
    if (this.closed) throw new SandboxClosedError();
    if (typeof code !== 'string') {
      throw new InvalidArgumentError({
        argument: 'code',
        value: code,
        message: 'must be a string of Python source',
      });
    }
    const bytes = Buffer.byteLength(code, 'utf8');
    if (bytes > this.options.maxCodeBytes)
      throw new CodeTooLargeError({ bytes, maxBytes: this.options.maxCodeBytes });
    if (
      typeof timeoutMs !== 'number' ||
      !(timeoutMs > 0) ||
      timeoutMs > this.options.maxTimeoutMs
    ) {
      throw new InvalidArgumentError({
        argument: 'timeoutMs',
        value: timeoutMs,
        message: `must be a positive number of milliseconds, at most maxTimeoutMs (${this.options.maxTimeoutMs})`,
      });
    }
    if (onOutput !== undefined && typeof onOutput !== 'function') {
      throw new InvalidArgumentError({
        argument: 'onOutput',
        value: onOutput,
        message: 'must be a function',
      });
    }
    abortSignal?.throwIfAborted();
    await this.ready();

    // close() aborts runs in flight through this controller.
    const controller = new AbortController();
    const signal =
      abortSignal === undefined
        ? controller.signal
        : AbortSignal.any([abortSignal, controller.signal]);
    const run = this.run({ code, timeoutMs, signal, onOutput });
    this.inFlight.set(controller, run);
    try {
      return await run;
    } finally {
      this.inFlight.delete(controller);
    }
  }

  private async run({
    code,
    timeoutMs,
    signal,
    onOutput,
  }: {
    code: string;
    timeoutMs: number;
    signal: AbortSignal;
    onOutput: SandboxExecuteOptions['onOutput'];
  }): Promise<SandboxResult> {
    const release = await this.slots.acquire(signal);
    try {
      const sandboxContainer = await this.pool!.acquire(signal);
      return await runInContainer({
        sandboxContainer,
        code,
        timeoutMs,
        maxOutputBytes: this.options.maxOutputBytes,
        dockerTimeoutMs: this.options.dockerTimeoutMs,
        cleanup: this.cleanup,
        abortSignal: signal,
        onOutput,
      });
    } finally {
      release();
    }
  }

  /**
   * Waits until every used container is removed; rejects with `SandboxCleanupError` if
   * any could not be. Runs return before their container is gone (gVisor teardown takes
   * ~70 ms); this is the point where removal is confirmed.
   */
  async waitForCleanup(): Promise<void> {
    await this.cleanup.settle();
  }

  /**
   * Stops accepting runs, kills runs in flight (they reject with `SandboxClosedError`),
   * removes idle and used containers, and rejects with `SandboxCleanupError` if any
   * could not be removed. Safe to call twice.
   */
  async close(): Promise<void> {
    this.closed = true;
    const reason = new SandboxClosedError();
    for (const controller of this.inFlight.keys()) controller.abort(reason);
    this.slots.rejectAll(reason);
    await this.readyPromise?.catch(() => {});
    await this.pool?.close(reason);
    await Promise.allSettled([...this.inFlight.values()]);
    await this.cleanup.settle();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
