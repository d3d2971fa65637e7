import { StringDecoder } from 'node:string_decoder';
import { FrameDemuxer } from './frame-demuxer.ts';
import type { SandboxOutputChunk } from './types.ts';

type StreamName = 'stdout' | 'stderr';

/** One stream's bytes, capped, with a held-back tail that may be the done marker. */
class StreamBuffer {
  readonly name: StreamName;
  readonly chunks: Buffer[] = [];
  bytes = 0;
  /** Bytes not yet passed to `onOutput` because they could be the start of the marker. */
  pending: Buffer = Buffer.alloc(0);
  exitStatus: number | undefined;
  /** Length of the done marker at the end of `chunks`, once seen. */
  markerBytes = 0;
  readonly decoder = new StringDecoder('utf8');

  constructor(name: StreamName) {
    this.name = name;
  }
}

/**
 * Collects a run's output from Docker's multiplexed attach stream. Keeps at most `maxBytes` (+ the marker) per stream; past that it calls `onLimit` once.
 * Detects the bootstrap's done marker at the end of each stream and strips it.
 */
export class OutputCollector {
  private readonly streams: Record<StreamName, StreamBuffer> = {
    stdout: new StreamBuffer('stdout'),
    stderr: new StreamBuffer('stderr'),
  };
  private readonly demuxer = new FrameDemuxer({
    onPayload: (stream, payload) => this.append(this.streams[stream], payload),
  });
  private limitHit = false;
  private readonly marker: Buffer;
  private readonly markerMax: number;
  private readonly maxBytes: number;
  private readonly onOutput: ((chunk: SandboxOutputChunk) => void) | undefined;
  private readonly onLimit: () => void;
  private readonly onMarkers: (exitStatus: number) => void;

  constructor({
    marker,
    maxBytes,
    onOutput,
    onLimit,
    onMarkers,
  }: {
    /** The done marker's prefix (see `markerPrefix`). */
    marker: Buffer;
    /** Cap per stream, in bytes. */
    maxBytes: number;
    /** Streaming callback for decoded output. */
    onOutput?: (chunk: SandboxOutputChunk) => void;
    /** Called once when a stream exceeds the cap. */
    onLimit: () => void;
    /** Called once both streams ended with the done marker, with the reported exit status. */
    onMarkers: (exitStatus: number) => void;
  }) {
    this.marker = marker;
    this.markerMax = marker.length + 4;
    this.maxBytes = maxBytes;
    this.onOutput = onOutput;
    this.onLimit = onLimit;
    this.onMarkers = onMarkers;
  }

  /** Feeds raw bytes from the attach socket. */
  push(data: Buffer): void {
    this.demuxer.push(data);
  }

  private append(stream: StreamBuffer, payload: Buffer): void {
    if (stream.exitStatus !== undefined) {
      // Output after the marker (a background process): the marker no longer ends the stream.
      this.release(stream, stream.pending);
      stream.pending = Buffer.alloc(0);
      stream.exitStatus = undefined;
      stream.markerBytes = 0;
    }
    const room = this.maxBytes + this.markerMax - stream.bytes;
    const kept = payload.length > room ? payload.subarray(0, Math.max(0, room)) : payload;
    if (kept.length > 0) {
      stream.chunks.push(Buffer.from(kept));
      stream.bytes += kept.length;
      this.stream(stream, kept);
    }
    if (payload.length > room) {
      this.limitHit = true;
      this.demuxer.stop();
      this.onLimit();
      return;
    }
    this.checkMarkers();
  }

  /** Forwards output to `onOutput`, holding back a tail that could be the marker. */
  private stream(stream: StreamBuffer, payload: Buffer): void {
    const data = stream.pending.length > 0 ? Buffer.concat([stream.pending, payload]) : payload;
    const nul = data.lastIndexOf(0);
    let cut = data.length;
    if (nul >= 0 && data.length - nul <= this.markerMax) {
      const tail = data.subarray(nul);
      const prefix = tail.subarray(0, Math.min(tail.length, this.marker.length));
      if (this.marker.subarray(0, prefix.length).equals(prefix)) {
        cut = nul;
        const rest = tail.subarray(this.marker.length);
        if (tail.length > this.marker.length && /^\d{1,3}\n$/.test(rest.toString('latin1'))) {
          stream.exitStatus = Number(rest.toString('latin1').trim());
          stream.markerBytes = tail.length;
        }
      }
    }
    this.release(stream, data.subarray(0, cut));
    stream.pending = Buffer.from(data.subarray(cut));
  }

  private release(stream: StreamBuffer, bytes: Buffer): void {
    if (this.onOutput === undefined || bytes.length === 0) return;
    const text = stream.decoder.write(bytes);
    if (text.length > 0) this.onOutput({ stream: stream.name, text });
  }

  private checkMarkers(): void {
    const { stdout, stderr } = this.streams;
    if (stdout.exitStatus !== undefined && stderr.exitStatus !== undefined) {
      this.onMarkers(stderr.exitStatus);
    }
  }

  /** True once a stream went over the cap. */
  get overLimit(): boolean {
    return this.limitHit;
  }

  /** The collected output; strips markers; reports truncation at the cap. */
  result(): { stdout: string; stderr: string; truncated: boolean } {
    let truncated = this.limitHit;
    const text = (stream: StreamBuffer): string => {
      let all = Buffer.concat(stream.chunks);
      all = all.subarray(0, all.length - stream.markerBytes);
      if (all.length > this.maxBytes) {
        truncated = true;
        all = all.subarray(0, this.maxBytes);
      }
      // A cut can split a UTF-8 character: the decoder replaces the fragment with U+FFFD.
      return all.toString('utf8');
    };
    return { stdout: text(this.streams.stdout), stderr: text(this.streams.stderr), truncated };
  }

  /** Flushes held-back output that turned out not to be a marker (the run ended without one). */
  flush(): void {
    for (const stream of Object.values(this.streams)) {
      if (stream.exitStatus === undefined) this.release(stream, stream.pending);
      stream.pending = Buffer.alloc(0);
      if (this.onOutput !== undefined) {
        const rest = stream.decoder.end();
        if (rest.length > 0) this.onOutput({ stream: stream.name, text: rest });
      }
    }
  }
}
