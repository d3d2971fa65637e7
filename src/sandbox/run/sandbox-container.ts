import { READY_MARKER, bootstrapCommand } from '../in-container/bootstrap.ts';
import type { BoxStream, OutputSink } from '../driver/box-stream.ts';
import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import type { BoxSpec, ContainerLimits, EngineDriver } from '../driver/engine-driver.ts';
import { ByteBuffer } from '../output/byte-buffer.ts';

/**
 * A started one-use box (container or pod) whose bootstrap waits for code on stdin, with its
 * attach stream open. Cold and warm runs both go through one of these; a warm one was simply
 * started earlier.
 */
export class SandboxContainer {
  /** The box's id on its engine. */
  readonly id: string;
  readonly stream: BoxStream;
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
  /** The stream's first stderr bytes were checked for the ready marker. */
  private markerChecked = false;
  private isReady = false;
  private sink: OutputSink | undefined;
  private used = false;

  private constructor({
    id,
    stream,
    ttlMs,
    preimported,
    startedAt = Date.now(),
  }: {
    id: string;
    stream: BoxStream;
    ttlMs: number;
    preimported: boolean;
    startedAt?: number;
  }) {
    this.id = id;
    this.stream = stream;
    this.startedAt = startedAt;
    this.expiresAt = this.startedAt + ttlMs;
    this.preimported = preimported;
    stream.onOutput((which, payload) => this.route(which, payload));
    // An idle container must not keep the host process alive; `take()` refs it again.
    stream.unref();
  }

  private route(stream: 'stdout' | 'stderr', payload: Buffer): void {
    if (!this.markerChecked && stream === 'stderr') {
      this.readyCheck = Buffer.concat([this.readyCheck, payload]);
      const n = Math.min(this.readyCheck.length, READY_MARKER.length);
      if (this.readyCheck.subarray(0, n).equals(READY_MARKER.subarray(0, n))) {
        if (this.readyCheck.length < READY_MARKER.length) return;
        payload = this.readyCheck.subarray(READY_MARKER.length);
      } else {
        // Not the marker: the bootstrap failed before it (or, attached late, the marker went
        // before the attach); keep everything as output.
        payload = this.readyCheck;
      }
      this.markerChecked = true;
      this.isReady = true;
      this.readyCheck = Buffer.alloc(0);
      if (payload.length === 0) return;
    }
    if (this.sink !== undefined) {
      this.sink(stream, payload);
    } else {
      this.early[stream].append(payload);
    }
  }

  /** The box of a one-use run: the bootstrap under `timeout -s KILL`, stdin closed after the code. */
  static spec({
    limits,
    ttlMs,
    preimport = [],
  }: {
    /** Image, runtime, resource limits and labels. */
    limits: ContainerLimits;
    /** Its life bound. */
    ttlMs: number;
    /** Modules the bootstrap imports while it waits for code. */
    preimport?: readonly string[];
  }): BoxSpec {
    return {
      limits,
      cmd: bootstrapCommand({ ttlMs, preimport }),
      ttlMs,
      kind: 'execute',
      stdinOnce: true,
      init: false,
    };
  }

  /**
   * Starts a box and attaches to it (through the engine's driver, each call with its deadline).
   * On failure the box, if made, is handed to `cleanup` for removal.
   */
  static async start({
    driver,
    limits,
    ttlMs,
    cleanup,
    preimport = [],
  }: {
    /** The engine. */
    driver: EngineDriver;
    /** Image, runtime and resource limits. */
    limits: ContainerLimits;
    /** Modules the bootstrap imports while it waits for code (empty: none). */
    preimport?: readonly string[];
    /** Lifetime bound enforced inside the container by `timeout -s KILL`. */
    ttlMs: number;
    /** Removes the box if starting fails half-way. */
    cleanup: CleanupTracker;
  }): Promise<SandboxContainer> {
    const { id, stream } = await driver.startBox(
      SandboxContainer.spec({ limits, ttlMs, preimport }),
      {
        cleanup,
      },
    );
    const started = new SandboxContainer({ id, stream, ttlMs, preimported: preimport.length > 0 });
    if (!driver.streamsFromStart) await started.readyBeforeAttach(driver);
    return started;
  }

  /**
   * A box started earlier (by any replica) and claimed from a shared pool: attached now, ready
   * if `ready` says so or its early output shows the marker.
   */
  static async attach({
    driver,
    id,
    startedAt,
    expiresAt,
    preimported,
    ready,
  }: {
    /** The engine. */
    driver: EngineDriver;
    /** The claimed box. */
    id: string;
    /** When it was made (epoch ms). */
    startedAt: number;
    /** When its TTL ends it (epoch ms). */
    expiresAt: number;
    /** Whether it was asked to pre-import. */
    preimported: boolean;
    /** Its pre-imports are known to be done. */
    ready: boolean;
  }): Promise<SandboxContainer> {
    const stream = await driver.attach(id);
    const claimed = new SandboxContainer({
      ...{ id, stream, preimported, startedAt },
      ttlMs: Math.max(0, expiresAt - startedAt),
    });
    if (ready) claimed.isReady = true;
    else await claimed.readyBeforeAttach(driver);
    return claimed;
  }

  /**
   * Attached to a box already running, the ready marker may have gone before the attach: the
   * box's early output says. (If it comes later, the stream strips it as usual.)
   */
  private async readyBeforeAttach(driver: EngineDriver): Promise<void> {
    const early = await driver.earlyOutput(this.id).catch(() => Buffer.alloc(0));
    if (early.includes(READY_MARKER)) this.isReady = true;
  }

  /** True while the container can still take a run. */
  get alive(): boolean {
    return !this.used && !this.stream.done && Date.now() < this.expiresAt;
  }

  /** True once the bootstrap finished its pre-imports and waits for code. */
  get ready(): boolean {
    return this.isReady;
  }

  /**
   * Marks the container used (one run only) and sends its output, from now on and what came
   * before, to `sink`.
   */
  take(sink: OutputSink): void {
    this.used = true;
    this.sink = sink;
    this.stream.ref();
    for (const stream of ['stderr', 'stdout'] as const) {
      const early = this.early[stream].bytes();
      if (early.length > 0) sink(stream, Buffer.from(early));
    }
  }

  /** Closes the stream and hands the container to `cleanup` for removal. */
  discard(cleanup: CleanupTracker): void {
    this.used = true;
    this.stream.destroy();
    void cleanup.remove(this.id);
  }
}
