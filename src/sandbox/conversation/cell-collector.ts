import { StringDecoder } from 'node:string_decoder';
import { parseArtifactMeta, toArtifact } from '../artifacts.ts';
import { ByteBuffer } from '../byte-buffer.ts';
import type { SandboxFile, SandboxImage, SandboxOutputChunk, SandboxResult } from '../types.ts';
import type { CellFrame, CellRequest } from './cell-protocol.ts';

/**
 * One cell's output, images, files and notes, counted against the caps here on the host: each
 * stream up to `maxOutputBytes`, records up to `maxRecords` and the artifact bytes, images,
 * files and notes up to their caps. `take` answers false past any of them, and nothing past a
 * cap is kept.
 *
 * @example
 * ```ts
 * const collector = new CellCollector({ request, onOutput });
 * if (!collector.take(frame)) stopCell();
 * ```
 */
export class CellCollector {
  readonly notes: string[] = [];
  private readonly images: SandboxImage[] = [];
  private readonly files: SandboxFile[] = [];
  private readonly streams = {
    stdout: { buffer: new ByteBuffer({ maxBytes: 0 }), decoder: new StringDecoder('utf8') },
    stderr: { buffer: new ByteBuffer({ maxBytes: 0 }), decoder: new StringDecoder('utf8') },
  };
  private records = 0;
  private recordBytes = 0;
  private truncated = false;
  private readonly request: CellRequest;
  private readonly onOutput: ((chunk: SandboxOutputChunk) => void) | undefined;

  constructor({
    request,
    onOutput,
  }: {
    /** The cell's caps. */
    request: CellRequest;
    /** Output as it arrives. */
    onOutput: ((chunk: SandboxOutputChunk) => void) | undefined;
  }) {
    this.request = request;
    this.onOutput = onOutput;
    for (const stream of Object.values(this.streams)) {
      stream.buffer = new ByteBuffer({ maxBytes: request.maxOutputBytes });
    }
  }

  /** Whether a record of `bytes` may still be read (checked before it is allocated). */
  allowRecord(bytes: number): boolean {
    const { caps, maxRecords } = this.request;
    // A record's header line (its JSON) is small; notes are at most a few hundred bytes.
    return (
      this.records + 1 <= maxRecords && this.recordBytes + bytes <= caps.bytes + maxRecords * 2048
    );
  }

  /** Takes a frame; false when a cap was passed (the cell must be stopped). */
  take(frame: CellFrame): boolean {
    if (frame.type === 'out' || frame.type === 'err') {
      const stream = this.streams[frame.type === 'out' ? 'stdout' : 'stderr'];
      const kept = stream.buffer.append(frame.data);
      if (kept > 0 && this.onOutput !== undefined) {
        const text = stream.decoder.write(frame.data.subarray(0, kept));
        if (text.length > 0)
          this.onOutput({ stream: frame.type === 'out' ? 'stdout' : 'stderr', text });
      }
      if (kept < frame.data.length) this.truncated = true;
      return kept === frame.data.length;
    }
    if (frame.type !== 'rec') return true;
    this.records++;
    this.recordBytes += frame.data.length;
    return this.record(frame.data);
  }

  private record(data: Buffer): boolean {
    const { caps } = this.request;
    const newline = data.indexOf(10);
    const head = data.subarray(0, newline < 0 ? data.length : newline).toString('utf8');
    if (head.startsWith('note ')) {
      let note: unknown;
      try {
        note = JSON.parse(head.slice(5));
      } catch {
        note = undefined;
      }
      if (typeof note !== 'string' || this.notes.length >= caps.notes) return false;
      this.notes.push(note.slice(0, 500));
      return true;
    }
    const meta = head.startsWith('file ') ? parseArtifactMeta(head.slice(5)) : undefined;
    const body = data.subarray(newline + 1);
    if (meta === undefined || newline < 0 || meta.bytes !== body.length) return false;
    const artifact = toArtifact(meta, new Uint8Array(body));
    if ('image' in artifact) {
      if (this.images.length >= caps.images) return false;
      this.images.push(artifact.image);
    } else if ('file' in artifact) {
      if (this.files.length >= caps.files) return false;
      this.files.push(artifact.file);
    } else if (this.notes.length < caps.notes) {
      this.notes.push(artifact.note);
    }
    return true;
  }

  /** What the cell returned (all within the caps: collection stops at the first record past one). */
  result(): Omit<SandboxResult, 'status' | 'exitCode' | 'durationMs'> {
    const text = (name: 'stdout' | 'stderr') => {
      const { buffer, decoder } = this.streams[name];
      const rest = decoder.end();
      if (rest.length > 0) this.onOutput?.({ stream: name, text: rest });
      return buffer.bytes().toString('utf8');
    };
    return {
      stdout: text('stdout'),
      stderr: text('stderr'),
      truncated: this.truncated,
      images: this.images,
      files: this.files,
      notes: this.notes,
    };
  }
}
