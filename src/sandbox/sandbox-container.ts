import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { bootstrapCommand } from './bootstrap.ts';
import type { CleanupTracker } from './cleanup-tracker.ts';
import { containerSpec, type ContainerLimits } from './container-spec.ts';
import { createContainer } from './create-container.ts';
import { dockerCall } from './docker-call.ts';

/**
 * A started one-use container whose bootstrap waits for code on stdin, with its attach
 * socket open. Cold and warm runs both go through one of these; a warm one was simply
 * started earlier.
 */
export class SandboxContainer {
  readonly container: Docker.Container;
  readonly socket: Duplex;
  readonly startedAt: number;
  /** Runs must end before this (epoch ms): the TTL wrapper kills the container then. */
  readonly expiresAt: number;
  /** Output that arrived before a run took the container (a startup failure). */
  readonly early: Buffer[] = [];
  private ended = false;
  private used = false;

  private constructor({
    container,
    socket,
    ttlMs,
  }: {
    container: Docker.Container;
    socket: Duplex;
    ttlMs: number;
  }) {
    this.container = container;
    this.socket = socket;
    this.startedAt = Date.now();
    this.expiresAt = this.startedAt + ttlMs;
    const onEarly = (chunk: Buffer) => {
      if (this.early.length < 64) this.early.push(chunk);
    };
    socket.on('data', onEarly);
    socket.once('end', () => (this.ended = true));
    socket.once('close', () => (this.ended = true));
    socket.on('error', () => (this.ended = true));
    // An idle container must not keep the host process alive; `take()` refs it again.
    (socket as Duplex & { unref?: () => void }).unref?.();
    this.detachEarly = () => socket.off('data', onEarly);
  }

  private readonly detachEarly: () => void;

  /**
   * Creates, attaches to and starts a container (each Docker call with a deadline). On
   * failure the container, if created, is handed to `cleanup` for removal.
   */
  static async start({
    docker,
    limits,
    ttlMs,
    dockerTimeoutMs,
    cleanup,
  }: {
    /** Docker client. */
    docker: Docker;
    /** Image, runtime and resource limits. */
    limits: ContainerLimits;
    /** Lifetime bound enforced inside the container by `timeout -s KILL`. */
    ttlMs: number;
    /** Deadline of each Docker call. */
    dockerTimeoutMs: number;
    /** Removes the container if starting fails half-way. */
    cleanup: CleanupTracker;
  }): Promise<SandboxContainer> {
    const spec = containerSpec({
      limits,
      cmd: bootstrapCommand({ ttlMs }),
      ttlMs,
      kind: 'execute',
      openStdin: true,
    });
    const container = await createContainer({ docker, spec, dockerTimeoutMs, cleanup });
    let socket: Duplex | undefined;
    try {
      socket = (await dockerCall({
        operation: 'container attach',
        timeoutMs: dockerTimeoutMs,
        call: abortSignal =>
          container.attach({
            stream: true,
            stdin: true,
            stdout: true,
            stderr: true,
            hijack: true,
            abortSignal,
          }),
      })) as Duplex;
      // Attach before start, so no output is lost. runsc can hang here (see pidsLimit).
      await dockerCall({
        operation: 'container start',
        timeoutMs: dockerTimeoutMs,
        call: abortSignal => container.start({ abortSignal }),
      });
      return new SandboxContainer({ container, socket, ttlMs });
    } catch (error) {
      socket?.destroy();
      cleanup.remove(container);
      throw error;
    }
  }

  /** True while the container can still take a run. */
  get alive(): boolean {
    return !this.ended && !this.used && !this.socket.destroyed && Date.now() < this.expiresAt;
  }

  /** Marks the container used (one run only) and returns early output to replay. */
  take(): Buffer[] {
    this.used = true;
    this.detachEarly();
    (this.socket as Duplex & { ref?: () => void }).ref?.();
    return this.early;
  }

  /** Closes the socket and hands the container to `cleanup` for removal. */
  discard(cleanup: CleanupTracker): void {
    this.used = true;
    this.detachEarly();
    this.socket.destroy();
    cleanup.remove(this.container);
  }
}
