// session/: the AI SDK's sandbox session on one long-lived container: exec, files, its place in the
// fleet.
import { posix } from 'node:path';
import type {
  Experimental_SandboxDirectoryEntry as SandboxDirectoryEntry,
  Experimental_SandboxFileStat as SandboxFileStat,
  Experimental_SandboxProcess as SandboxProcess,
  Experimental_SandboxSession as SandboxSession,
} from 'ai';
import type Docker from 'dockerode';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { SandboxClosedError } from '../../errors/sandbox-closed-error.ts';
import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import type { ContainerLimits } from '../driver/engine-driver.ts';
import { containerSpec } from '../docker/container-spec.ts';
import { createContainer } from '../docker/create-container.ts';
import { dockerCall } from '../docker/docker-call.ts';
import type { EngineLink } from '../engines/engine-types.ts';
import { watchContainerExit } from './container-exit.ts';
import { startExec } from './exec-process.ts';
import type { SessionRunResult } from './session-options.ts';
import { fileOperation } from './file-helper.ts';

const BASE_DIRECTORY = '/tmp';

type SpawnOptions = Parameters<SandboxSession['spawn']>[0];

type WritableSandboxProcess = SandboxProcess & { readonly stdin: WritableStream<Uint8Array> };

/**
 * The AI SDK's `Experimental_SandboxSession` on one long-lived container with the same
 * hardening as `DockerSandbox` (gVisor, no network, read-only root, uid 65534, no
 * capabilities, memory/CPU/pids limits). Commands run with `sh -c` through `docker exec`;
 * files live in /tmp (the base directory, a noexec tmpfs) for the session's life. Pass it
 * as `experimental_sandbox`; close it when the conversation ends. Create it with
 * `DockerSandbox#createSession`.
 *
 * @example
 * ```ts
 * await using session = await sandbox.createSession();
 * const result = await generateText({ model, tools, prompt, experimental_sandbox: session });
 * ```
 */
export class DockerSandboxSession implements SandboxSession, AsyncDisposable {
  readonly description: string;
  private readonly container: Docker.Container;
  /** The session's own tracker, so close() reports this container's removal only. */
  private readonly cleanup: CleanupTracker;
  private readonly dockerTimeoutMs: number;
  private readonly maxOutputBytes: number;
  private readonly maxFileBytes: number;
  private readonly engine: EngineLink | undefined;
  private closed = false;
  private readonly onClose: (() => void) | undefined;
  /** Ends commands in flight when the container stops or its engine is lost. */
  private readonly containerExit: ReturnType<typeof watchContainerExit>;

  private constructor({
    container,
    cleanup,
    dockerTimeoutMs,
    limits,
    engine,
    onClose,
    maxOutputBytes,
    maxFileBytes,
  }: {
    container: Docker.Container;
    cleanup: CleanupTracker;
    dockerTimeoutMs: number;
    maxOutputBytes: number;
    maxFileBytes: number;
    limits: ContainerLimits;
    engine: EngineLink | undefined;
    onClose: (() => void) | undefined;
  }) {
    this.onClose = onClose;
    this.container = container;
    this.cleanup = cleanup;
    this.dockerTimeoutMs = dockerTimeoutMs;
    this.maxOutputBytes = maxOutputBytes;
    this.maxFileBytes = maxFileBytes;
    this.engine = engine;
    this.containerExit = watchContainerExit({ container, engine, closed: () => this.closed });
    this.description =
      `Isolated Linux sandbox (Debian, Python 3 as \`python3\`, POSIX sh; ${limits.runtime === 'runsc' ? 'gVisor' : limits.runtime}). ` +
      `No network access. Working directory ${BASE_DIRECTORY} (${limits.tmpfsMiB} MiB, files persist for this session); ` +
      'everything else is read-only. Files in /tmp cannot be executed directly: run `python3 script.py` or ' +
      '`sh script.sh`. Commands run as an unprivileged user with ' +
      `${Math.round(limits.memoryBytes / 1048576)} MiB of memory. No package installation.`;
  }

  /** Starts the session's container. Used by `DockerSandbox#createSession`. */
  static async start({
    docker,
    limits,
    pidsLimit,
    ttlMs,
    dockerTimeoutMs,
    cleanup,
    engine,
    onClose,
    maxOutputBytes = 1024 * 1024,
    maxFileBytes = 32 * 1024 * 1024,
  }: {
    /** Docker client. */
    docker: Docker;
    /** Image, runtime and resource limits. */
    limits: ContainerLimits;
    /** The session's own pids limit (see `DockerSandbox#createSession`). */
    pidsLimit: number;
    /** The container kills itself after this long (TTL wrapper). */
    ttlMs: number;
    /** Deadline of each Docker call. */
    dockerTimeoutMs: number;
    /** Removes the container on close. */
    cleanup: CleanupTracker;
    /** The engine it runs on: names it in errors and tells when it is lost. */
    engine?: EngineLink;
    /** Told once when the session closes (its owner's bookkeeping). */
    onClose?: () => void;
    /** Cap per output stream of each command; past it the command's tree is killed. */
    maxOutputBytes?: number;
    /** Largest file the read methods return (regular files only). */
    maxFileBytes?: number;
  }): Promise<DockerSandboxSession> {
    const seconds = `${Math.ceil(ttlMs / 1000)}s`;
    const spec = containerSpec({
      limits: { ...limits, pidsLimit },
      cmd: ['timeout', '-s', 'KILL', seconds, 'sleep', seconds],
      ttlMs,
      kind: 'session',
      openStdin: false,
      // Killed commands leave orphans; `timeout`/`sleep` as PID 1 would never reap them,
      // and zombies would use up the pids limit.
      init: true,
    });
    const container = await createContainer({ docker, spec, dockerTimeoutMs, cleanup });
    try {
      await dockerCall({
        operation: 'container start',
        timeoutMs: dockerTimeoutMs,
        call: abortSignal => container.start({ abortSignal }),
      });
    } catch (error) {
      void cleanup.remove(container.id);
      throw error;
    }
    return new DockerSandboxSession({
      ...{ container, cleanup, dockerTimeoutMs, limits, engine, onClose },
      ...{ maxOutputBytes, maxFileBytes },
    });
  }

  private resolve(path: string, argument = 'path'): string {
    if (this.closed) throw new SandboxClosedError({ what: 'sandbox session' });
    if (this.containerExit.error !== undefined) throw this.containerExit.error;
    if (typeof path !== 'string' || path.length === 0 || path.includes('\0')) {
      throw new InvalidArgumentError({
        argument,
        value: path,
        message: 'must be a non-empty path',
      });
    }
    return posix.resolve(BASE_DIRECTORY, path);
  }

  /** Engine failures as the sandbox's typed errors (naming the engine); others unchanged. */
  private typed(error: unknown): unknown {
    return this.engine === undefined ? error : this.engine.toError(error, { inFlight: true });
  }

  private file(
    operation: 'read' | 'write' | 'stat' | 'list' | 'delete',
    { path, abortSignal }: { path: string; abortSignal?: AbortSignal },
    input?: ReadableStream<Uint8Array>,
  ): Promise<Buffer | null> {
    const resolved = this.resolve(path);
    return fileOperation({
      container: this.container,
      operation,
      path: resolved,
      input,
      abortSignal,
      dockerTimeoutMs: this.dockerTimeoutMs,
      containerExit: this.containerExit,
      maxBytes: this.maxFileBytes,
    }).catch((error: unknown) => {
      throw this.typed(error);
    });
  }

  readonly spawn = (async (
    options: SpawnOptions,
  ): Promise<SandboxProcess | WritableSandboxProcess> => {
    const { command, workingDirectory, env, abortSignal, stdin = false } = options;
    if (typeof command !== 'string' || command.length === 0) {
      throw new InvalidArgumentError({
        argument: 'command',
        value: command,
        message: 'must be a non-empty string',
      });
    }
    const handle = await startExec({
      container: this.container,
      command,
      workingDirectory: this.resolve(workingDirectory ?? BASE_DIRECTORY, 'workingDirectory'),
      env,
      stdin,
      abortSignal,
      dockerTimeoutMs: this.dockerTimeoutMs,
      containerExit: this.containerExit,
      maxOutputBytes: this.maxOutputBytes,
    }).catch((error: unknown) => {
      throw this.typed(error);
    });
    const typed = (error: unknown) => {
      throw this.typed(error);
    };
    const child: SandboxProcess = {
      stdout: handle.stdout,
      stderr: handle.stderr,
      wait: () => handle.wait().catch(typed),
      kill: () => handle.kill().catch(typed),
    };
    return handle.stdin ? { ...child, stdin: handle.stdin } : child;
  }) as unknown as SandboxSession['spawn'];

  /**
   * Runs a command and collects its output. Besides the AI SDK's `exitCode`, `stdout` and
   * `stderr`, the result says `status: 'output-limit'` (and `truncated: true`) when a stream
   * passed `maxOutputBytes`: the output is cut there and the command's process tree killed.
   */
  readonly run = async (
    options: Parameters<SandboxSession['run']>[0],
  ): Promise<SessionRunResult> => {
    const child = (await this.spawn({ ...options, stdin: false })) as Omit<
      SandboxProcess,
      'wait'
    > & {
      wait(): Promise<{ exitCode: number; status: 'exited' | 'output-limit' }>;
    };
    const text = async (stream: ReadableStream<Uint8Array>) => {
      let out = '';
      const decoder = new TextDecoder();
      for await (const chunk of stream) out += decoder.decode(chunk, { stream: true });
      return out + decoder.decode();
    };
    const [stdout, stderr] = await Promise.all([text(child.stdout), text(child.stderr)]);
    const { exitCode, status } = await child.wait();
    const truncated = status === 'output-limit';
    return { exitCode, stdout, stderr, truncated, status: truncated ? 'output-limit' : 'exited' };
  };

  readonly readFile: SandboxSession['readFile'] = async options => {
    const bytes = await this.file('read', options);
    return bytes === null ? null : new Blob([new Uint8Array(bytes)]).stream();
  };

  readonly readBinaryFile: SandboxSession['readBinaryFile'] = async options => {
    const bytes = await this.file('read', options);
    return bytes === null ? null : new Uint8Array(bytes);
  };

  readonly readTextFile: SandboxSession['readTextFile'] = async options => {
    const { encoding = 'utf-8', startLine, endLine } = options;
    const bytes = await this.file('read', options);
    if (bytes === null) return null;
    const text = new TextDecoder(encoding).decode(bytes);
    if (startLine === undefined && endLine === undefined) return text;
    const lines = text.split(/(?<=\n)/);
    return lines.slice(Math.max(0, (startLine ?? 1) - 1), endLine ?? lines.length).join('');
  };

  readonly writeFile: SandboxSession['writeFile'] = async options => {
    await this.file('write', options, options.content);
  };

  readonly writeBinaryFile: SandboxSession['writeBinaryFile'] = async options => {
    await this.file('write', options, new Blob([new Uint8Array(options.content)]).stream());
  };

  readonly writeTextFile: SandboxSession['writeTextFile'] = async options => {
    const { content, encoding = 'utf-8' } = options;
    const normalized = encoding.toLowerCase().replace(/[^a-z0-9]/g, '');
    if (!Buffer.isEncoding(normalized === 'utf8' ? 'utf8' : encoding)) {
      throw new InvalidArgumentError({
        argument: 'encoding',
        value: encoding,
        message: 'is not supported',
      });
    }
    const bytes = Buffer.from(
      content,
      (normalized === 'utf8' ? 'utf8' : encoding) as BufferEncoding,
    );
    await this.file('write', options, new Blob([new Uint8Array(bytes)]).stream());
  };

  readonly stat: SandboxSession['stat'] = async options => {
    const bytes = await this.file('stat', options);
    return bytes === null ? null : (JSON.parse(bytes.toString('utf8')) as SandboxFileStat);
  };

  readonly listDirectory: SandboxSession['listDirectory'] = async options => {
    const bytes = await this.file('list', options);
    return bytes === null ? null : (JSON.parse(bytes.toString('utf8')) as SandboxDirectoryEntry[]);
  };

  readonly deleteFile: SandboxSession['deleteFile'] = async options => {
    return (await this.file('delete', options)) !== null;
  };

  /**
   * Removes the container (killing whatever still runs in it) and waits for it; rejects
   * with `SandboxCleanupError` if it could not be removed. Safe to call twice.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClose?.();
    this.containerExit.stop();
    void this.cleanup.remove(this.container.id);
    await this.cleanup.settle();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
