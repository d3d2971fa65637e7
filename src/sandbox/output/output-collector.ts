// output/: one run's output: streams under their caps, the record protocol's budget, images and
// files returned.
import { toArtifact } from './artifacts.ts';
import { RecordBudget, type RecordCaps } from './record-budget.ts';
import { RecordStream } from './record-stream.ts';
import type { SandboxFile, SandboxImage, SandboxOutputChunk } from '../types.ts';

type StreamName = 'stdout' | 'stderr';

/**
 * Collects one run's output (already demultiplexed, see `FrameDemuxer`): the code's stdout and
 * stderr, each capped at `maxBytes`, and the records the bootstrap writes after the code:
 * images, files and notes, counted against `caps` on the host (see `RecordBudget`) whatever
 * the container claims. Past any cap `onLimit` is called once and nothing more is taken.
 * `onMarkers` fires once both streams carried the done marker.
 *
 * @example
 * ```ts
 * const caps = { images: 10, files: 20, bytes: 8 << 20 };
 * const collector = new OutputCollector({ marker: markerPrefix(nonce), proof: markerPrefix(token), maxBytes: 1 << 20, caps, onLimit, onMarkers });
 * demuxer = new FrameDemuxer({ onPayload: (stream, bytes) => collector.push(stream, bytes) });
 * ```
 */
export class OutputCollector {
  private readonly streams: Record<StreamName, RecordStream>;
  private limitHit = false;
  private markersSeen = false;
  private readonly budget: RecordBudget;
  private readonly onLimit: () => void;
  private readonly onMarkers: (exitStatus: number) => void;

  constructor({
    marker,
    proof,
    maxBytes,
    caps,
    onOutput,
    onLimit,
    onMarkers,
  }: {
    /** The run's record prefix (see `markerPrefix`). */
    marker: Buffer;
    /** The done marker's prefix, known only to the supervisor (see `markerPrefix`). */
    proof: Buffer;
    /** Cap per stream on the code's own output, in bytes. */
    maxBytes: number;
    /** What the run may return: images, files, their bytes, notes, records in all. */
    caps: RecordCaps;
    /** Streaming callback for decoded output. */
    onOutput?: (chunk: SandboxOutputChunk) => void;
    /** Called once when a cap is exceeded. */
    onLimit: () => void;
    /** Called once both streams ended with the done marker, with the reported exit status. */
    onMarkers: (exitStatus: number) => void;
  }) {
    this.budget = new RecordBudget(caps);
    const stream = (name: StreamName) =>
      new RecordStream({
        prefix: marker,
        proof,
        maxBytes,
        ...(onOutput ? { onText: (text: string) => onOutput({ stream: name, text }) } : {}),
        budget: this.budget,
      });
    this.streams = { stdout: stream('stdout'), stderr: stream('stderr') };
    this.onLimit = onLimit;
    this.onMarkers = onMarkers;
  }

  /** Feeds payload bytes of one stream. */
  push(stream: StreamName, payload: Buffer): void {
    if (this.limitHit) return;
    if (!this.streams[stream].push(payload)) {
      this.limitHit = true;
      this.onLimit();
      return;
    }
    const { stdout, stderr } = this.streams;
    if (stdout.done && stderr.done && !this.markersSeen) {
      this.markersSeen = true;
      this.onMarkers(stderr.exitStatus!);
    }
  }

  /** True once a cap was exceeded. */
  get overLimit(): boolean {
    return this.limitHit;
  }

  /** Flushes held-back output that turned out not to be a record (the run ended without a marker). */
  flush(): void {
    this.streams.stdout.flush();
    this.streams.stderr.flush();
  }

  /** The collected output, images, files and notes. */
  result(): {
    stdout: string;
    stderr: string;
    truncated: boolean;
    images: SandboxImage[];
    files: SandboxFile[];
    notes: string[];
  } {
    const { stdout, stderr } = this.streams;
    const images: SandboxImage[] = [];
    const files: SandboxFile[] = [];
    const notes = [...stdout.notes, ...stderr.notes];
    const stopped = this.budget.note();
    if (stopped !== undefined) notes.push(stopped);
    for (const { meta, data } of [...stdout.artifacts, ...stderr.artifacts]) {
      const artifact = toArtifact(meta, data);
      if ('image' in artifact) images.push(artifact.image);
      else if ('file' in artifact) files.push(artifact.file);
      else notes.push(artifact.note);
    }
    // A cut can split a UTF-8 character: the decoder replaces the fragment with U+FFFD.
    const text = (stream: RecordStream) => stream.user.bytes().toString('utf8');
    return {
      stdout: text(stdout),
      stderr: text(stderr),
      truncated: this.limitHit,
      images,
      files,
      notes,
    };
  }
}
