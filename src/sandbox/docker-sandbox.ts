import type Docker from 'dockerode';
import { CodeTooLargeError } from '../errors/code-too-large-error.ts';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { SandboxCleanupError } from '../errors/sandbox-cleanup-error.ts';
import { SandboxClosedError } from '../errors/sandbox-closed-error.ts';
import { checkEngine } from './check-engine.ts';
import {
  resolveDockerSandboxOptions,
  type DockerSandboxOptions,
  type ResolvedDockerSandboxOptions,
} from './docker-sandbox-options.ts';
import { DockerSandboxSession } from './session/docker-sandbox-session.ts';
import { CleanupTracker } from './cleanup-tracker.ts';
import type { ContainerLimits } from './container-spec.ts';
import { resolveInputFiles } from './input-files.ts';
import { runInContainer } from './run-in-container.ts';
import { SandboxContainer } from './sandbox-container.ts';
import { Semaphore } from './semaphore.ts';
import { sweepStaleContainers } from './sweep.ts';
import type { Sandbox, SandboxExecuteOptions, SandboxResult } from './types.ts';
import { WarmPool } from './warm-pool.ts';

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
  private readonly options: ResolvedDockerSandboxOptions;
  private readonly cleanup: CleanupTracker;
  private readonly slots: Semaphore;
  private readonly inFlight = new Map<AbortController, Promise<unknown>>();
  private pool: WarmPool | undefined;
  private limits: ContainerLimits | undefined;
  private readonly sessions = new Set<DockerSandboxSession>();
  private readyPromise: Promise<void> | undefined;
  private runtimeInUse: string | undefined;
  private imagePackages: string[] | undefined;
  private closed = false;

  constructor(options: DockerSandboxOptions = {}) {
    this.options = resolveDockerSandboxOptions(options);
    const { docker, dockerTimeoutMs, onCleanupError, maxConcurrentExecutions } = this.options;
    this.docker = docker;
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

  /**
   * The Python distributions in the image (`pandas==1.5.3`, ...) as its `ai-toolbelt.packages`
   * label lists them, once `ready()` resolved; undefined for images without the label. The
   * python tool tells the model about them.
   */
  get packages(): readonly string[] | undefined {
    return this.imagePackages;
  }

  /** The memory limit of each run, bytes. */
  get memoryBytes(): number {
    return this.options.memoryBytes;
  }

  /** Idle warm containers right now. */
  get warmCount(): number {
    return this.pool?.idleCount ?? 0;
  }

  /** Idle warm containers whose pre-imports are done (see `preimport`). */
  get warmReadyCount(): number {
    return this.pool?.readyCount ?? 0;
  }

  /**
   * Checks the engine (throws `SandboxUnavailableError` / `SandboxRuntimeMissingError`),
   * sweeps stale containers and starts filling the warm pool. Idempotent.
   */
  ready(): Promise<void> {
    // A failed check is not cached: the next call retries (e.g. after Docker was started).
    this.readyPromise ??= this.init().catch((error: unknown) => {
      this.readyPromise = undefined;
      throw error;
    });
    return this.readyPromise;
  }

  private async init(): Promise<void> {
    const { docker, options } = this;
    const { runtime, packages } = await checkEngine(options);
    this.runtimeInUse = runtime;
    this.imagePackages = packages;
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
    this.limits = limits;
    // A warm container may idle up to warmMaxAgeMs and then run up to maxTimeoutMs.
    const ttlMs = options.warmMaxAgeMs + options.maxTimeoutMs + 60_000;
    this.pool = new WarmPool({
      size: options.warmPoolSize,
      maxConcurrentStarts: options.maxConcurrentStarts,
      maxAgeMs: options.warmMaxAgeMs,
      cleanup: this.cleanup,
      start: ({ preimport }) =>
        SandboxContainer.start({
          docker,
          limits,
          ttlMs,
          preimport: preimport ? options.preimport : [],
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
    const {
      timeoutMs = this.options.defaultTimeoutMs,
      abortSignal,
      onOutput,
      files,
    } = options ?? {};
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
    const inputFiles = resolveInputFiles({
      files,
      maxFiles: this.options.maxInputFiles,
      maxBytes: this.options.maxInputBytes,
    });
    abortSignal?.throwIfAborted();
    await this.ready();
    if (this.closed) throw new SandboxClosedError();

    // close() aborts runs in flight through this controller.
    const controller = new AbortController();
    const signal =
      abortSignal === undefined
        ? controller.signal
        : AbortSignal.any([abortSignal, controller.signal]);
    const run = this.run({ code, files: inputFiles, timeoutMs, signal, onOutput });
    this.inFlight.set(controller, run);
    try {
      return await run;
    } finally {
      this.inFlight.delete(controller);
    }
  }

  private async run({
    code,
    files,
    timeoutMs,
    signal,
    onOutput,
  }: {
    code: string;
    files: Array<{ path: string; data: Uint8Array }>;
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
        files,
        caps: {
          images: this.options.maxImages,
          files: this.options.maxOutputFiles,
          bytes: this.options.maxArtifactBytes,
        },
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
   * Opens an `Experimental_SandboxSession` (for the AI SDK's `experimental_sandbox`) on a
   * long-lived container with this sandbox's image, runtime and limits. Files persist in
   * /tmp for the session's life; `close()` it when done (closing the sandbox closes it too).
   *
   * @example
   * ```ts
   * await using session = await sandbox.createSession();
   * const { stdout } = await session.run({ command: 'python3 -c "print(2 ** 10)"' });
   * ```
   */
  async createSession({
    ttlMs = 3_600_000,
    pidsLimit = 1024,
  }: {
    /** The container kills itself after this long even if the session is never closed. */
    ttlMs?: number;
    /**
     * pids limit of the session's container. Higher than for one-use runs: under gVisor's
     * ptrace platform the sandbox's host threads grow with every command a long session
     * runs, and reaching the limit ends the whole sandbox (exit 2).
     */
    pidsLimit?: number;
  } = {}): Promise<DockerSandboxSession> {
    if (this.closed) throw new SandboxClosedError();
    if (typeof ttlMs !== 'number' || !(ttlMs >= 1_000) || !Number.isFinite(ttlMs)) {
      throw new InvalidArgumentError({
        argument: 'ttlMs',
        value: ttlMs,
        message: 'must be >= 1000',
      });
    }
    if (typeof pidsLimit !== 'number' || !(pidsLimit >= 64)) {
      throw new InvalidArgumentError({
        argument: 'pidsLimit',
        value: pidsLimit,
        message: 'must be >= 64',
      });
    }
    await this.ready();
    const { dockerTimeoutMs, onCleanupError } = this.options;
    const session = await DockerSandboxSession.start({
      docker: this.docker,
      limits: this.limits!,
      pidsLimit,
      ttlMs,
      dockerTimeoutMs,
      cleanup: new CleanupTracker({ dockerTimeoutMs, onCleanupError }),
    });
    this.sessions.add(session);
    const close = session.close.bind(session);
    session.close = () => {
      this.sessions.delete(session);
      return close();
    };
    if (this.closed) await session.close();
    return session;
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
    const sessionClosings = await Promise.allSettled(
      [...this.sessions].map(session => session.close()),
    );
    await this.cleanup.settle();
    const failed = sessionClosings.find(outcome => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
