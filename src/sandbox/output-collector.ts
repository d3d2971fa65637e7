import { toArtifact } from './artifacts.ts';
import { RecordStream } from './record-stream.ts';
import type { SandboxFile, SandboxImage, SandboxOutputChunk } from './types.ts';

type StreamName = 'stdout' | 'stderr';

/**
 * Collects one run's output (already demultiplexed, see `FrameDemuxer`): the code's stdout and
 * stderr, each capped at `maxBytes` (past it `onLimit` is called once), and the records the
 * bootstrap writes after the code: images and files (capped at `maxArtifactBytes` together)
 * and notes. `onMarkers` fires once both streams carried the done marker.
 *
 * @example
 * ```ts
 * const collector = new OutputCollector({ marker: markerPrefix(nonce), maxBytes: 1 << 20, maxArtifactBytes: 8 << 20, onLimit, onMarkers });
 * demuxer = new FrameDemuxer({ onPayload: (stream, bytes) => collector.push(stream, bytes) });
 * ```
 */
export class OutputCollector {
  private readonly streams: Record<StreamName, RecordStream>;
  private limitHit = false;
  private markersSeen = false;
  private artifactBytes = 0;
  private readonly onLimit: () => void;
  private readonly onMarkers: (exitStatus: number) => void;

  constructor({
    marker,
    proof,
    maxBytes,
    maxArtifactBytes,
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
    /** Cap on the bytes of all returned images and files. */
    maxArtifactBytes: number;
    /** Streaming callback for decoded output. */
    onOutput?: (chunk: SandboxOutputChunk) => void;
    /** Called once when a cap is exceeded. */
    onLimit: () => void;
    /** Called once both streams ended with the done marker, with the reported exit status. */
    onMarkers: (exitStatus: number) => void;
  }) {
    const stream = (name: StreamName) =>
      new RecordStream({
        prefix: marker,
        proof,
        maxBytes,
        ...(onOutput ? { onText: (text: string) => onOutput({ stream: name, text }) } : {}),
        onArtifactBytes: bytes => {
          this.artifactBytes += bytes;
          return this.artifactBytes <= maxArtifactBytes;
        },
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
