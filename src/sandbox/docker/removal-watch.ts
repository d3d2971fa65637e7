import { createInterface } from 'node:readline';
import type Docker from 'dockerode';
import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import { dockerCall } from './docker-call.ts';
import { SANDBOX_LABEL } from '../driver/labels.ts';

/**
 * Tells `cleanup` (`removed`) about every sandbox container the engine destroys while this
 * process holds something for it (its egress proxy), whoever removed it: another replica's
 * sweep, an outside `docker rm`. It follows the engine's `destroy` events; each time it opens
 * the stream it also looks up the containers it holds something for, so a removal while no
 * stream was open is found too. The stream ends with the engine (`start` again once it is back)
 * and on `stop`.
 *
 * @example
 * ```ts
 * const watch = new RemovalWatch({ docker, cleanup, dockerTimeoutMs: 15_000 });
 * await watch.start();
 * ```
 */
export class RemovalWatch {
  private readonly docker: Docker;
  private readonly cleanup: Pick<CleanupTracker, 'removed' | 'held'>;
  private readonly dockerTimeoutMs: number;
  private controller: AbortController | undefined;

  constructor({
    docker,
    cleanup,
    dockerTimeoutMs,
  }: {
    /** The engine's client. */
    docker: Docker;
    /** The engine's removals, told about each container gone. */
    cleanup: Pick<CleanupTracker, 'removed' | 'held'>;
    /** Deadline of opening the stream and of the look-up. */
    dockerTimeoutMs: number;
  }) {
    this.docker = docker;
    this.cleanup = cleanup;
    this.dockerTimeoutMs = dockerTimeoutMs;
  }

  /**
   * Opens the stream unless it is open; settles (never rejects) once it is open and the held
   * containers were looked up, or the engine did not answer (call again later).
   */
  async start(): Promise<void> {
    if (this.controller !== undefined) return;
    const controller = new AbortController();
    this.controller = controller;
    const ended = () => {
      if (this.controller === controller) this.controller = undefined;
    };
    try {
      // The stream outlives the call's deadline: only `controller` may end it.
      const stream = (await dockerCall({
        operation: 'events',
        timeoutMs: this.dockerTimeoutMs,
        call: () =>
          this.docker.getEvents({
            filters: { type: ['container'], event: ['destroy'], label: [SANDBOX_LABEL] },
            abortSignal: controller.signal,
          }),
      })) as NodeJS.ReadableStream & { destroy?: () => void; socket?: { unref?: () => void } };
      // Like the engine's timers, the stream never keeps the process alive.
      stream.socket?.unref?.();
      stream.on('error', ended);
      stream.on('close', ended);
      stream.on('end', ended);
      const close = () => stream.destroy?.();
      // Stopped while it was opening.
      if (controller.signal.aborted) return close();
      controller.signal.addEventListener('abort', close, { once: true });
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', line => this.seen(line));
      await this.lookUp();
    } catch {
      controller.abort();
      ended();
    }
  }

  /** Closes the stream. */
  stop(): void {
    this.controller?.abort();
    this.controller = undefined;
  }

  private seen(line: string): void {
    let event: { Type?: unknown; Action?: unknown; Actor?: { ID?: unknown } };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      return;
    }
    const id = event.Actor?.ID;
    if (event.Type === 'container' && event.Action === 'destroy' && typeof id === 'string') {
      this.cleanup.removed(id);
    }
  }

  /** Releases what is held for containers the engine no longer has. */
  private async lookUp(): Promise<void> {
    // Held before the listing, so each was made before it: one the listing lacks was removed.
    const held = this.cleanup.held();
    if (held.length === 0) return;
    const listed = await dockerCall({
      operation: 'container list',
      timeoutMs: this.dockerTimeoutMs,
      call: abortSignal =>
        this.docker.listContainers({ all: true, filters: { id: held }, abortSignal }),
    });
    const present = new Set(listed.map(info => info.Id));
    for (const id of held) if (!present.has(id)) this.cleanup.removed(id);
  }
}
