import { randomBytes } from 'node:crypto';
import { SandboxBusyError } from '../errors/sandbox-busy-error.ts';
import { SandboxCleanupError } from '../errors/sandbox-cleanup-error.ts';
import { SandboxClosedError } from '../errors/sandbox-closed-error.ts';
import {
  resolveDockerSandboxOptions,
  type DockerSandboxOptions,
  type ResolvedDockerSandboxOptions,
} from './options/docker-sandbox-options.ts';
import { DockerSandboxSession } from './session/docker-sandbox-session.ts';
import { type SessionOptions, resolveSessionOptions } from './session/session-options.ts';
import { Engine } from './engines/engine.ts';
import { createDriver } from './create-driver.ts';
import { createEgressGateway } from './egress/create-egress-gateway.ts';
import type { EgressGateway } from './egress/egress-gateway.ts';
import type { SandboxEngineStatus } from './engines/engine-types.ts';
import { EngineSet } from './engines/engine-set.ts';
import { runOnFleet } from './engines/fleet-run.ts';
import { startSessionOnFleet } from './session/fleet-session.ts';
import { checkRunArguments } from './run/run-arguments.ts';
import { ConversationInterpreters } from './conversation/conversation-interpreters.ts';
import { checkConversation } from './conversation/check-conversation.ts';
import { recordBusyRejection, traceSandboxRun } from '../telemetry/sandbox-telemetry.ts';
import { resolveConversationOptions } from './options/conversation-options.ts';
import type {
  ConversationSandbox,
  Sandbox,
  SandboxCellOptions,
  SandboxCellResult,
  SandboxExecuteOptions,
  SandboxResult,
} from './types.ts';

/**
 * Runs Python in one-use Docker containers under gVisor, hardened (no
 * network, read-only root, noexec /tmp, uid 65534 (nobody), no capabilities, memory/CPU/pids limits),
 * with a warm pool of pre-started containers. It runs on one Docker engine (the local one,
 * DOCKER_HOST, or `docker`) or spreads runs over several (`engines`, e.g. sandbox hosts
 * reached over mutual TLS), taking out engines that stop answering and putting them back
 * when they answer again. Construction is cheap; engines are checked on first use (or
 * eagerly with `DockerSandbox.create`).
 *
 * @example
 * ```ts
 * import { DockerSandbox } from 'ai-toolbelt/sandbox';
 * await using sandbox = await DockerSandbox.create({ warmPoolSize: 2 });
 * const result = await sandbox.execute('print(sum(range(10)))', { timeoutMs: 5_000 });
 * console.log(result.status, result.stdout); // success 45
 * ```
 */
export class DockerSandbox implements Sandbox, ConversationSandbox {
  /**
   * Random id of this sandbox, on every container it makes (label
   * `ai-toolbelt.sandbox.instance`): what it removes on close, and what other replicas
   * sharing an engine leave alone.
   */
  readonly instanceId = randomBytes(8).toString('hex');
  private readonly options: ResolvedDockerSandboxOptions;
  private readonly engines: EngineSet;
  private readonly inFlight = new Map<AbortController, Promise<unknown>>();
  private readonly sessions = new Set<DockerSandboxSession>();
  private readonly interpreters: ConversationInterpreters;
  private readonly prewarmInterpreters: boolean;
  private readonly egress: EgressGateway | undefined;
  /** Sessions being started (they count against `maxSessions` too). */
  private sessionStarts = 0;
  private readyPromise: Promise<void> | undefined;
  private closed = false;

  constructor(options: DockerSandboxOptions = {}) {
    this.options = resolveDockerSandboxOptions(options);
    this.egress = createEgressGateway(this.options);
    const engines: Engine[] = this.options.engines.map(
      address =>
        new Engine({
          driver: createDriver({ address, options: this.options, egress: this.egress }),
          options: this.options,
          instanceId: this.instanceId,
          onStateChange: engine => this.engines.onStateChange(engine),
          egress: this.egress,
        }),
    );
    this.engines = new EngineSet({
      engines,
      maxPerEngine: this.options.maxConcurrentExecutions,
      maxQueued: this.options.maxQueued,
    });
    this.interpreters = new ConversationInterpreters({
      engines: this.engines,
      options: resolveConversationOptions(options.conversations ?? {}),
      sandbox: this.options,
      instanceId: this.instanceId,
    });
    this.prewarmInterpreters = options.conversations !== undefined;
  }

  /** Creates a sandbox and checks the engines, runtime and image before resolving. */
  static async create(options: DockerSandboxOptions = {}): Promise<DockerSandbox> {
    const sandbox = new DockerSandbox(options);
    await sandbox.ready();
    return sandbox;
  }

  /** The Docker runtime in use (`runsc`), once `ready()` resolved. */
  get runtime(): string | undefined {
    const { engines } = this.engines;
    return (engines.find(engine => engine.state === 'up') ?? engines[0])?.runtime;
  }

  /** Idle warm containers right now, over all engines. */
  get warmCount(): number {
    return this.engines.engines.reduce((sum, engine) => sum + engine.warmCount, 0);
  }

  /** Idle warm containers whose pre-imports are done (see `preimport`), over all engines. */
  get warmReadyCount(): number {
    return this.engines.engines.reduce((sum, engine) => sum + engine.warmReadyCount, 0);
  }

  /** Conversation interpreters started and waiting for a new conversation, over all engines. */
  get warmInterpreterCount(): number {
    return this.interpreters.warmCount;
  }

  /**
   * The Python distributions in the image (`pandas==1.5.3`, ...) as its `ai-toolbelt.packages`
   * label lists them, once `ready()` resolved; undefined for images without the label. The
   * python tool tells the model about them.
   */
  get packages(): readonly string[] | undefined {
    return this.engines.engines.find(engine => engine.packages !== undefined)?.packages;
  }

  /**
   * What code may reach (the `egress` allow-list as written, and whether pip has an index);
   * undefined without a policy. The python tool tells the model.
   */
  get network(): { allow: string[]; pip: boolean } | undefined {
    const egress = this.options.egress;
    if (egress === undefined) return undefined;
    const allow = egress.rules.rules.map(rule => rule.text);
    // Without pythonIndexUrl pip uses PyPI, reachable only if both its hosts are allowed.
    const pip =
      egress.pythonIndexUrl !== undefined ||
      (egress.rules.match('pypi.org', 443) !== undefined &&
        egress.rules.match('files.pythonhosted.org', 443) !== undefined);
    return { allow, pip };
  }

  /** The memory limit of each run, bytes. */
  get memoryBytes(): number {
    return this.options.memoryBytes;
  }

  /** Images a run may return (`maxImages`); the python tool keeps no more. */
  get maxImages(): number {
    return this.options.maxImages;
  }

  /** Files a run may return (`maxOutputFiles`); the python tool keeps no more. */
  get maxOutputFiles(): number {
    return this.options.maxOutputFiles;
  }

  /**
   * Each engine's name, state (`up`, `down`...), runs in flight, warm containers, sessions
   * and completed runs.
   *
   * @example
   * ```ts
   * for (const engine of sandbox.engineStatus()) console.log(engine.name, engine.state, engine.inFlight);
   * ```
   */
  engineStatus(): SandboxEngineStatus[] {
    return this.engines.engines.map(engine => engine.status());
  }

  /**
   * Checks the engines (with one engine it throws that engine's `SandboxUnavailableError` /
   * `SandboxRuntimeMissingError`; with several, only when none works), sweeps expired
   * containers and starts filling the warm pools. Engines that fail are probed in the
   * background and join when they answer. Idempotent.
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
    const { engines } = this.engines;
    await Promise.allSettled(engines.map(engine => engine.start()));
    if (this.closed) throw new SandboxClosedError();
    if (!engines.some(engine => engine.state === 'up')) throw this.engines.unavailable();
    for (const engine of engines) engine.startMonitoring();
    // An app that configured conversations gets its waiting interpreters now; others on first use.
    if (this.prewarmInterpreters) this.interpreters.prewarm();
  }

  /**
   * Runs Python `code` in a fresh container and resolves with its outcome; see `Sandbox`.
   * Infrastructure failures reject with typed errors naming the engine (see README).
   */
  async execute(code: string, options: SandboxExecuteOptions = {}): Promise<SandboxResult> {
    if (this.closed) throw new SandboxClosedError();
    const { abortSignal, onOutput } = options ?? {};
    const { timeoutMs, files: inputFiles } = checkRunArguments({
      code,
      options: options ?? {},
      sandbox: this.options,
    });
    abortSignal?.throwIfAborted();
    await this.ready();
    if (this.closed) throw new SandboxClosedError();

    const { maxOutputBytes, maxImages, maxOutputFiles, maxArtifactBytes } = this.options;
    const caps = { images: maxImages, files: maxOutputFiles, bytes: maxArtifactBytes };
    return traceSandboxRun({
      ...{ kind: 'run', timeoutMs, inputFiles: inputFiles.length },
      run: trace =>
        this.track(abortSignal, signal =>
          runOnFleet({
            ...{ engines: this.engines, code, files: inputFiles, caps, timeoutMs },
            ...{ maxOutputBytes, abortSignal: signal, onOutput, trace },
          }),
        ),
    });
  }

  /**
   * Runs `code` as the next cell of a conversation's long-lived interpreter (see
   * `ConversationSandbox` and the `conversations` option): globals, imports and files under
   * /tmp persist between cells, from any replica that shares the store and engines. A lost
   * interpreter (idle expiry, a timeout, out of memory, its engine gone) is rebuilt by re-running
   * the conversation's kept cells first; `restored` says so. Same limits and errors as `execute`,
   * plus `SandboxBusyError` (`interpreters`).
   *
   * @example
   * ```ts
   * const conversation = { id: chatId, userId };
   * await sandbox.executeCell('import pandas as pd; df = pd.DataFrame({"m": [1, 2]})', { conversation });
   * const { stdout } = await sandbox.executeCell('print(df.m.sum())', { conversation }); // 3
   * ```
   */
  async executeCell(code: string, options: SandboxCellOptions): Promise<SandboxCellResult> {
    if (this.closed) throw new SandboxClosedError();
    const { abortSignal, onOutput, onResult, conversation } = options ?? ({} as SandboxCellOptions);
    checkConversation(conversation);
    const { timeoutMs, files } = checkRunArguments({
      code,
      options: options ?? {},
      sandbox: this.options,
    });
    abortSignal?.throwIfAborted();
    await this.ready();
    if (this.closed) throw new SandboxClosedError();
    return traceSandboxRun({
      ...{ kind: 'cell', timeoutMs, inputFiles: files.length },
      run: trace =>
        this.track(abortSignal, signal =>
          this.interpreters.run({
            ...{ code, conversation, files, timeoutMs, onOutput, onResult, trace },
            abortSignal: signal,
          }),
        ),
    });
  }

  /** Runs work that close() aborts (through the signal it is given) and waits for. */
  private async track<T>(
    abortSignal: AbortSignal | undefined,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const controller = new AbortController();
    const signal =
      abortSignal === undefined
        ? controller.signal
        : AbortSignal.any([abortSignal, controller.signal]);
    const running = work(signal);
    this.inFlight.set(controller, running);
    try {
      return await running;
    } finally {
      this.inFlight.delete(controller);
    }
  }

  /**
   * Opens an `Experimental_SandboxSession` (for the AI SDK's `experimental_sandbox`) on a
   * long-lived container with this sandbox's image, runtime and limits, on the healthy
   * engine with the least work. Files persist in /tmp for the session's life; `close()` it
   * when done (closing the sandbox closes it too). If its engine is lost, the session's
   * calls reject with `SandboxUnavailableError` (`engine-lost`).
   *
   * @example
   * ```ts
   * await using session = await sandbox.createSession();
   * const { stdout } = await session.run({ command: 'python3 -c "print(2 ** 10)"' });
   * ```
   */
  async createSession(options: SessionOptions = {}): Promise<DockerSandboxSession> {
    if (this.closed) throw new SandboxClosedError();
    const { ttlMs, pidsLimit, maxOutputBytes, maxFileBytes } = resolveSessionOptions(
      options ?? {},
      { defaultMaxOutputBytes: this.options.maxOutputBytes },
    );
    const { dockerTimeoutMs, onCleanupError, maxSessions } = this.options;
    if (this.sessions.size + this.sessionStarts >= maxSessions) {
      recordBusyRejection('sessions');
      throw new SandboxBusyError({ resource: 'sessions', limit: maxSessions });
    }
    this.sessionStarts++;
    let session: DockerSandboxSession;
    try {
      await this.ready();
      session = await startSessionOnFleet({
        ...{ engines: this.engines, ttlMs, pidsLimit, dockerTimeoutMs, onCleanupError },
        ...{ maxOutputBytes, maxFileBytes },
        isClosed: () => this.closed,
        onClose: () => this.sessions.delete(session),
      });
      this.sessions.add(session);
    } finally {
      this.sessionStarts--;
    }
    if (this.closed) await session.close();
    return session;
  }

  /**
   * Waits until every used container is removed; rejects with `SandboxCleanupError` if
   * any could not be. Runs return before their container is gone (gVisor teardown takes
   * ~70 ms); this is the point where removal is confirmed. Removals an engine could not
   * take because it was down are retried when it is back.
   */
  async waitForCleanup(): Promise<void> {
    const failures = (
      await Promise.all(this.engines.engines.map(engine => engine.cleanup.collect()))
    ).flat();
    if (failures.length > 0) {
      throw new SandboxCleanupError({
        containerIds: failures.map(f => f.id),
        causes: failures.map(f => f.cause),
      });
    }
  }

  /**
   * Stops accepting runs, kills runs in flight (they reject with `SandboxClosedError`),
   * closes sessions, and removes every container of this sandbox on every engine (listed
   * by its instance label, so containers whose create answer was lost go too), except
   * conversation interpreters another replica serves now. Rejects with
   * `SandboxCleanupError` naming only containers that exist and could not be removed (on an
   * engine that is down at close, the ones known to exist). Safe to call twice.
   */
  async close(): Promise<void> {
    this.closed = true;
    const reason = new SandboxClosedError();
    for (const controller of this.inFlight.keys()) controller.abort(reason);
    this.engines.rejectAll(reason);
    await this.readyPromise?.catch(() => {});
    const { engines } = this.engines;
    await Promise.all(engines.map(engine => engine.closePool(reason)));
    await Promise.allSettled([...this.inFlight.values()]);
    // Interpreters another replica serves now stay (see `ConversationInterpreters#close`).
    const keep = await this.interpreters.close();
    // A session's removal failure is seen again (and reported) by its engine's final sweep.
    await Promise.allSettled([...this.sessions].map(session => session.close()));
    const failures = (await Promise.all(engines.map(engine => engine.close({ keep })))).flat();
    // Interpreters kept for other replicas keep their proxy's directory: the next replica to
    // serve one takes the proxy over.
    await this.egress?.close({ keep });
    if (failures.length === 0) return;
    const byId = new Map(failures.map(failure => [failure.id, failure.cause]));
    throw new SandboxCleanupError({ containerIds: [...byId.keys()], causes: [...byId.values()] });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
