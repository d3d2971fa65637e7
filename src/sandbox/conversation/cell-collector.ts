import { StringDecoder } from 'node:string_decoder';
import { parseArtifactMeta, toArtifact } from '../output/artifacts.ts';
import { parseChartData } from '../output/chart-data.ts';
import { parseDisplayResult } from '../output/display-result.ts';
import { ByteBuffer } from '../output/byte-buffer.ts';
import type {
  SandboxDisplayResult,
  SandboxFile,
  SandboxImage,
  SandboxOutputChunk,
  SandboxResult,
} from '../types.ts';
import { RecordBudget } from '../output/record-budget.ts';
import type { CellFrame, CellRequest } from './cell-protocol.ts';

/** Room for a record's header line (`file {json}`) on top of its bytes. */
const MAX_RECORD_HEAD = 4096;

/**
 * One cell's output, images, files and notes, counted against the caps here on the host: each
 * stream up to `maxOutputBytes`, and the records with a `RecordBudget` (images, files, their
 * bytes, notes, records in all, malformed ones included), as one-shot runs are. `take` answers false past any of them, and nothing past a
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
  private readonly results: SandboxDisplayResult[] = [];
  private readonly streams = {
    stdout: { buffer: new ByteBuffer({ maxBytes: 0 }), decoder: new StringDecoder('utf8') },
    stderr: { buffer: new ByteBuffer({ maxBytes: 0 }), decoder: new StringDecoder('utf8') },
  };
  private readonly budget: RecordBudget;
  private records = 0;
  private artifactBytes = 0;
  private truncated = false;
  private readonly request: CellRequest;
  private readonly onOutput: ((chunk: SandboxOutputChunk) => void) | undefined;
  private readonly onResult: ((result: SandboxDisplayResult) => void) | undefined;

  constructor({
    request,
    onOutput,
    onResult,
  }: {
    /** The cell's caps. */
    request: CellRequest;
    /** Output as it arrives. */
    onOutput: ((chunk: SandboxOutputChunk) => void) | undefined;
    /** Shown values as they arrive, checked. */
    onResult?: ((result: SandboxDisplayResult) => void) | undefined;
  }) {
    this.request = request;
    this.onOutput = onOutput;
    this.onResult = onResult;
    this.budget = new RecordBudget(request.caps);
    for (const stream of Object.values(this.streams)) {
      stream.buffer = new ByteBuffer({ maxBytes: request.maxOutputBytes });
    }
  }

  /**
   * Whether a record frame of `bytes` may still be read, checked before it is allocated: a
   * record slot left, and no more than the artifact bytes left plus room for its header line.
   */
  allowRecord(bytes: number): boolean {
    const { caps } = this.request;
    return (
      this.budget.exceeded === undefined &&
      this.records < caps.records &&
      bytes <= caps.bytes - this.artifactBytes + MAX_RECORD_HEAD
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
    if (this.record(frame.data)) return true;
    const why = this.budget.note();
    if (why !== undefined) this.notes.push(why);
    return false;
  }

  /** Takes one record if the budget admits it (counted as the bootstrap's records are). */
  private record(data: Buffer): boolean {
    const newline = data.indexOf(10);
    const head = data.subarray(0, newline < 0 ? data.length : newline).toString('utf8');
    if (head.startsWith('result ') || head.startsWith('chart '))
      return this.shown(head, data.length);
    if (head.startsWith('note ')) {
      let note: unknown;
      try {
        note = JSON.parse(head.slice(5));
      } catch {
        note = undefined;
      }
      if (typeof note !== 'string') return this.budget.admit({ kind: 'malformed' });
      if (!this.budget.admit({ kind: 'note' })) return false;
      this.notes.push(note.slice(0, 500));
      return true;
    }
    const meta = head.startsWith('file ') ? parseArtifactMeta(head.slice(5)) : undefined;
    const body = data.subarray(newline + 1);
    if (meta === undefined || newline < 0 || meta.bytes !== body.length) {
      return this.budget.admit({ kind: 'malformed' });
    }
    if (!this.budget.admit({ kind: meta.kind, bytes: body.length })) return false;
    this.artifactBytes += body.length;
    const artifact = toArtifact(meta, new Uint8Array(body));
    if ('image' in artifact) this.images.push(artifact.image);
    else if ('file' in artifact) this.files.push(artifact.file);
    else this.notes.push(artifact.note);
    return true;
  }

  /**
   * A shown value (`result {json}`) or the chart data of an image returned before it
   * (`chart {"path", "chart"}`), checked again here; their bytes count with images and files.
   */
  private shown(head: string, bytes: number): boolean {
    let value: unknown;
    try {
      value = JSON.parse(head.slice(head.indexOf(' ') + 1));
    } catch {
      return this.budget.admit({ kind: 'malformed' });
    }
    if (head.startsWith('result ')) {
      const result = parseDisplayResult(value, { maxChars: this.request.maxOutputBytes });
      if (result === undefined) return this.budget.admit({ kind: 'malformed' });
      if (!this.budget.admit({ kind: 'result', bytes })) return false;
      this.artifactBytes += bytes;
      this.results.push(result);
      this.onResult?.(result);
      return true;
    }
    const { path, chart } = (value ?? {}) as { path?: unknown; chart?: unknown };
    const image = this.images.find(found => found.name === path && found.chart === undefined);
    const parsed = image === undefined ? undefined : parseChartData(chart);
    if (image === undefined || parsed === undefined)
      return this.budget.admit({ kind: 'malformed' });
    if (!this.budget.admit({ kind: 'chart', bytes })) return false;
    this.artifactBytes += bytes;
    image.chart = parsed;
    return true;
  }

  /** What the cell returned (all within the caps: collection stops at the first record past one). */
  result(): Omit<SandboxResult, 'status' | 'exitCode' | 'durationMs'> & {
    results: SandboxDisplayResult[];
  } {
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
      results: this.results,
    };
  }
}
