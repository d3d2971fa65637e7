/** Where a box's output goes: each piece of payload with the stream it came on. */
export type OutputSink = (stream: 'stdout' | 'stderr', payload: Buffer) => void;

/** What an engine's transport does for a `BoxStream` (a hijacked socket, a WebSocket). */
export type BoxStreamTransport = {
  /** Sends bytes to the box's stdin; `done` once they are handed to the transport. */
  write(chunk: Buffer, done?: (error?: Error | null) => void): void;
  /** Closes the box's stdin (after `chunk`, if given); output keeps coming. */
  end(chunk?: Buffer): void;
  /** Closes the connection both ways. */
  destroy(): void;
  /** Lets the connection keep the process alive (`ref`) or not (`unref`). */
  ref?(): void;
  unref?(): void;
};

/**
 * One attach to a box: its stdin, and its stdout and stderr as separate payloads (the engine's
 * framing already taken off). Output that arrives before anyone listens is kept until the
 * listener is set; `onEnd` hears once that the connection ended, closed or failed, also when it
 * already had. The same bytes travel on every engine, so the run and cell protocols sit on this.
 *
 * @example
 * ```ts
 * const stream = await driver.attach(id);
 * stream.onOutput((which, bytes) => parser.push(bytes));
 * stream.onEnd(() => finish());
 * stream.write(request);
 * ```
 */
export class BoxStream {
  private sink: OutputSink | undefined;
  private early: Array<[stream: 'stdout' | 'stderr', payload: Buffer]> = [];
  private readonly endListeners = new Set<() => void>();
  private isEnded = false;
  private isDestroyed = false;
  private readonly transport: BoxStreamTransport;

  constructor(transport: BoxStreamTransport) {
    this.transport = transport;
  }

  /** Called by the transport with each piece of output. */
  output(stream: 'stdout' | 'stderr', payload: Buffer): void {
    if (payload.length === 0) return;
    if (this.sink !== undefined) this.sink(stream, payload);
    else this.early.push([stream, payload]);
  }

  /** Called by the transport once the connection ended, closed or failed. */
  ended(): void {
    if (this.isEnded) return;
    this.isEnded = true;
    for (const listener of [...this.endListeners]) listener();
    this.endListeners.clear();
  }

  /** Sends output to `sink` from now on (and what came before it was set). */
  onOutput(sink: OutputSink): void {
    this.sink = sink;
    const early = this.early;
    this.early = [];
    for (const [stream, payload] of early) sink(stream, payload);
  }

  /** Calls `listener` once when the connection ends (at once if it has); returns an unsubscribe. */
  onEnd(listener: () => void): () => void {
    if (this.isEnded) {
      queueMicrotask(listener);
      return () => {};
    }
    this.endListeners.add(listener);
    return () => void this.endListeners.delete(listener);
  }

  /** True once the connection ended (or was destroyed). */
  get done(): boolean {
    return this.isEnded || this.isDestroyed;
  }

  /** Sends bytes to the box's stdin. */
  write(chunk: Buffer, done?: (error?: Error | null) => void): void {
    this.transport.write(chunk, done);
  }

  /** Sends `chunk` (if given) and closes the box's stdin. */
  end(chunk?: Buffer): void {
    this.transport.end(chunk);
  }

  /** Closes the connection; no more output is delivered. */
  destroy(): void {
    if (this.isDestroyed) return;
    this.isDestroyed = true;
    this.sink = () => {};
    this.transport.destroy();
    this.ended();
  }

  /** The connection keeps the process alive again (a run took the box). */
  ref(): void {
    this.transport.ref?.();
  }

  /** The connection does not keep the process alive (an idle box in a pool). */
  unref(): void {
    this.transport.unref?.();
  }
}
