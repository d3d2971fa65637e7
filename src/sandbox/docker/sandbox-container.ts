import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { READY_MARKER, bootstrapCommand } from '../in-container/bootstrap.ts';
import type { CleanupTracker } from './cleanup-tracker.ts';
import { containerSpec, type ContainerLimits } from './container-spec.ts';
import { createContainer } from './create-container.ts';
import { dockerCall } from './docker-call.ts';
import { ByteBuffer } from '../output/byte-buffer.ts';
import { FrameDemuxer } from './frame-demuxer.ts';

/**
 * A started one-use container whose bootstrap waits for code on stdin, with its attach
 * socket open. Cold and warm runs both go through one of these; a warm one was simply
 * started earlier.
 */
type Sink = (stream: 'stdout' | 'stderr', payload: Buffer) => void;

export class SandboxContainer {
  readonly container: Docker.Container;
  readonly socket: Duplex;
  readonly startedAt: number;
  /** Runs must end before this (epoch ms): the TTL wrapper kills the container then. */
  readonly expiresAt: number;
  /** Whether the bootstrap was asked to import modules before code arrives. */
  readonly preimported: boolean;
  /** Output before a run took the container (a start-up failure worth showing), capped. */
  private readonly early = {
    stdout: new ByteBuffer({ maxBytes: 32 * 1024, initialBytes: 0 }),
    stderr: new ByteBuffer({ maxBytes: 32 * 1024, initialBytes: 0 }),
  };
  /** Bytes of stderr not yet matched against the ready marker (it comes first). */
  private readyCheck = Buffer.alloc(0);
  private isReady = false;
  private sink: Sink | undefined;
  private ended = false;
  private used = false;

  private constructor({
    container,
    socket,
    ttlMs,
    preimported,
  }: {
    container: Docker.Container;
    socket: Duplex;
    ttlMs: number;
    preimported: boolean;
  }) {
    this.container = container;
    this.socket = socket;
    this.startedAt = Date.now();
    this.expiresAt = this.startedAt + ttlMs;
    this.preimported = preimported;
    const demuxer = new FrameDemuxer({
      onPayload: (stream, payload) => this.route(stream, payload),
    });
    socket.on('data', (chunk: Buffer) => demuxer.push(chunk));
    socket.once('end', () => (this.ended = true));
    socket.once('close', () => (this.ended = true));
    socket.on('error', () => (this.ended = true));
    // An idle container must not keep the host process alive; `take()` refs it again.
    (socket as Duplex & { unref?: () => void }).unref?.();
  }

  private route(stream: 'stdout' | 'stderr', payload: Buffer): void {
    if (!this.isReady && stream === 'stderr') {
      this.readyCheck = Buffer.concat([this.readyCheck, payload]);
      const n = Math.min(this.readyCheck.length, READY_MARKER.length);
      if (this.readyCheck.subarray(0, n).equals(READY_MARKER.subarray(0, n))) {
        if (this.readyCheck.length < READY_MARKER.length) return;
        this.isReady = true;
        payload = this.readyCheck.subarray(READY_MARKER.length);
      } else {
        // Not the marker: the bootstrap failed before it; keep everything as output.
        this.isReady = true;
        payload = this.readyCheck;
      }
      this.readyCheck = Buffer.alloc(0);
      if (payload.length === 0) return;
    }
    if (this.sink !== undefined) {
      this.sink(stream, payload);
    } else {
      this.early[stream].append(payload);
    }
  }

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
    preimport = [],
  }: {
    /** Docker client. */
    docker: Docker;
    /** Image, runtime and resource limits. */
    limits: ContainerLimits;
    /** Modules the bootstrap imports while it waits for code (empty: none). */
    preimport?: readonly string[];
    /** Lifetime bound enforced inside the container by `timeout -s KILL`. */
    ttlMs: number;
    /** Deadline of each Docker call. */
    dockerTimeoutMs: number;
    /** Removes the container if starting fails half-way. */
    cleanup: CleanupTracker;
  }): Promise<SandboxContainer> {
    const spec = containerSpec({
      limits,
      cmd: bootstrapCommand({ ttlMs, preimport }),
      ttlMs,
      kind: 'execute',
      openStdin: true,
    });
    const container = await createContainer({
      ...{ docker, spec, dockerTimeoutMs, cleanup, ttlMs },
      egress: limits.egress,
    });
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
      return new SandboxContainer({ container, socket, ttlMs, preimported: preimport.length > 0 });
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

  /** True once the bootstrap finished its pre-imports and waits for code. */
  get ready(): boolean {
    return this.isReady;
  }

  /**
   * Marks the container used (one run only) and sends its output, from now on and what came
   * before, to `sink`.
   */
  take(sink: Sink): void {
    this.used = true;
    this.sink = sink;
    (this.socket as Duplex & { ref?: () => void }).ref?.();
    for (const stream of ['stderr', 'stdout'] as const) {
      const early = this.early[stream].bytes();
      if (early.length > 0) sink(stream, Buffer.from(early));
    }
  }

  /** Closes the socket and hands the container to `cleanup` for removal. */
  discard(cleanup: CleanupTracker): void {
    this.used = true;
    this.socket.destroy();
    cleanup.remove(this.container);
  }
}
