import { StringDecoder } from 'node:string_decoder';
import { type ArtifactMeta, parseArtifactMeta } from './artifacts.ts';
import { ByteBuffer } from './byte-buffer.ts';
import type { RecordBudget } from './record-budget.ts';

type Mode = 'user' | 'header' | 'body' | 'between' | 'done';

const MAX_HEADER_BYTES = 4096;
const MAX_NOTE_CHARS = 500;

/**
 * One output stream of a run: the code's own bytes (capped at `maxBytes`, streamed as text),
 * then, behind the run's record prefix, the bootstrap's records (`file {json}\n<bytes>`,
 * `note "text"\n`), and last the done marker `<status>\n` behind the proof prefix, written
 * by the supervisor process once the code's process is gone. A tail that could be the start
 * of either prefix is held back until the next bytes tell.
 *
 * Records that do not parse (a daemon thread printing while they are written) end record
 * parsing: what follows is treated as the code's output again, with a note.
 *
 * The code's bytes go into one buffer that grows by doubling up to the cap, and each
 * artifact into one buffer of its announced size: never one object per Docker frame.
 *
 * The record prefix is in the code's process, so code that digs it out (e.g. through the
 * bootstrap's exit hook, which `gc.get_objects()` lists) can write records of its own; the
 * proof prefix never is. Every record header, malformed ones included, is therefore counted
 * against the run's `RecordBudget` before anything is allocated for it, and past a cap the
 * stream stops (`push` returns false): a forged flood never gets further than a real run.
 */
export class RecordStream {
  /** The code's own bytes, up to the cap. */
  readonly user: ByteBuffer;
  exitStatus: number | undefined;
  readonly artifacts: Array<{ meta: ArtifactMeta; data: Buffer }> = [];
  readonly notes: string[] = [];
  private mode: Mode = 'user';
  private pending: Buffer = Buffer.alloc(0);
  private header: Buffer[] = [];
  private headerBytes = 0;
  private body: Buffer = Buffer.alloc(0);
  private bodyBytes = 0;
  private remaining = 0;
  private meta: ArtifactMeta | undefined;
  private readonly decoder = new StringDecoder('utf8');
  private readonly prefix: Buffer;
  private readonly proof: Buffer;
  /** Which prefix the record being read started with. */
  private kind: 'record' | 'proof' = 'record';
  private readonly onText: ((text: string) => void) | undefined;
  private readonly budget: RecordBudget;
  private lostNoted = false;

  constructor({
    prefix,
    proof,
    maxBytes,
    onText,
    budget,
  }: {
    /** The run's record prefix (see `markerPrefix`), known to the code's process. */
    prefix: Buffer;
    /**
     * The prefix of the done marker, known only to the supervisor process (see
     * `python/run_supervisor.py`), which writes it with the code's real exit status once the code's
     * process and everything it started are gone.
     */
    proof: Buffer;
    /** Cap on the code's own bytes; `push` returns false past it. */
    maxBytes: number;
    /** Receives the code's output as text. */
    onText?: (text: string) => void;
    /** Asked before each record is accepted; a refusal stops the stream (over a cap). */
    budget: RecordBudget;
  }) {
    this.prefix = prefix;
    this.proof = proof;
    this.user = new ByteBuffer({ maxBytes });
    this.onText = onText;
    this.budget = budget;
  }

  /** True once the done marker arrived. */
  get done(): boolean {
    return this.mode === 'done';
  }

  /** Feeds payload bytes; false when a cap was exceeded (the run must be stopped). */
  push(payload: Buffer): boolean {
    let data = payload;
    while (data.length > 0) {
      switch (this.mode) {
        case 'done':
          // After the marker the process is exiting: a daemon thread's last words are dropped.
          return true;
        case 'user': {
          const buffer = this.pending.length > 0 ? Buffer.concat([this.pending, data]) : data;
          data = Buffer.alloc(0);
          const record = buffer.indexOf(this.prefix);
          const proof = buffer.indexOf(this.proof);
          const found = record >= 0 && (proof < 0 || record < proof) ? record : proof;
          const cut = found >= 0 ? found : buffer.length - this.partialPrefix(buffer);
          if (!this.keep(buffer.subarray(0, cut))) return false;
          if (found >= 0) {
            this.pending = Buffer.alloc(0);
            this.mode = 'header';
            this.kind = found === proof ? 'proof' : 'record';
            data = buffer.subarray(found + (found === proof ? this.proof : this.prefix).length);
          } else {
            this.pending = Buffer.from(buffer.subarray(cut));
          }
          break;
        }
        case 'header': {
          const newline = data.indexOf(10);
          const part = newline >= 0 ? data.subarray(0, newline) : data;
          this.header.push(part);
          this.headerBytes += part.length;
          data = newline >= 0 ? data.subarray(newline + 1) : Buffer.alloc(0);
          let ok: 'ok' | 'abandon' | 'over-limit' = 'ok';
          if (this.headerBytes > MAX_HEADER_BYTES) {
            ok = 'abandon';
          } else if (newline >= 0) {
            const line = Buffer.concat(this.header).toString('utf8');
            this.header = [];
            this.headerBytes = 0;
            ok = this.record(line);
          }
          if (ok === 'abandon') {
            // A malformed record counts too: an endless run of them must not be free.
            if (!this.budget.admit({ kind: 'malformed' })) return false;
            data = this.abandon(data);
          } else if (ok === 'over-limit') {
            return false;
          }
          break;
        }
        case 'body': {
          const take = Math.min(this.remaining, data.length);
          this.body.set(data.subarray(0, take), this.bodyBytes);
          this.bodyBytes += take;
          this.remaining -= take;
          data = data.subarray(take);
          if (this.remaining === 0) this.finishArtifact();
          break;
        }
        case 'between': {
          // The next record must start right away.
          const buffer = this.pending.length > 0 ? Buffer.concat([this.pending, data]) : data;
          data = Buffer.alloc(0);
          const starts = (prefix: Buffer) => {
            const n = Math.min(buffer.length, prefix.length);
            return buffer.subarray(0, n).equals(prefix.subarray(0, n));
          };
          const next = starts(this.prefix)
            ? this.prefix
            : starts(this.proof)
              ? this.proof
              : undefined;
          if (next === undefined) {
            this.pending = Buffer.alloc(0);
            data = this.abandon(buffer);
          } else if (buffer.length < next.length) {
            this.pending = Buffer.from(buffer);
          } else {
            this.pending = Buffer.alloc(0);
            this.mode = 'header';
            this.kind = next === this.proof ? 'proof' : 'record';
            data = buffer.subarray(next.length);
          }
          break;
        }
      }
    }
    return true;
  }

  /** Passes on held-back bytes that turned out not to be a record (the run ended without one). */
  flush(): void {
    if (this.mode === 'user' && this.pending.length > 0) {
      this.keep(this.pending.subarray(0, Math.max(0, this.user.room)));
      this.pending = Buffer.alloc(0);
    }
    const rest = this.decoder.end();
    if (rest.length > 0) this.onText?.(rest);
  }

  private keep(bytes: Buffer): boolean {
    if (bytes.length === 0) return true;
    const room = this.user.room;
    const kept = this.user.append(bytes);
    if (kept > 0 && this.onText !== undefined) {
      const text = this.decoder.write(bytes.subarray(0, kept));
      if (text.length > 0) this.onText(text);
    }
    return bytes.length <= room;
  }

  /** Length of the longest tail of `buffer` that starts either prefix. */
  private partialPrefix(buffer: Buffer): number {
    const longest = Math.max(this.prefix.length, this.proof.length);
    const from = Math.max(0, buffer.length - longest + 1);
    for (let i = buffer.indexOf(0, from); i >= 0; i = buffer.indexOf(0, i + 1)) {
      const tail = buffer.subarray(i);
      for (const prefix of [this.prefix, this.proof]) {
        if (prefix.subarray(0, tail.length).equals(tail)) return tail.length;
      }
    }
    return 0;
  }

  private record(line: string): 'ok' | 'abandon' | 'over-limit' {
    if (this.kind === 'proof') {
      if (!/^\d{1,3}$/.test(line)) return 'abandon';
      this.exitStatus = Number(line);
      this.mode = 'done';
      return 'ok';
    }
    if (line.startsWith('note ')) {
      let note: unknown;
      try {
        note = JSON.parse(line.slice(5));
      } catch {
        return 'abandon';
      }
      if (typeof note !== 'string') return 'abandon';
      if (!this.budget.admit({ kind: 'note' })) return 'over-limit';
      this.notes.push(note.slice(0, MAX_NOTE_CHARS));
      this.mode = 'between';
      return 'ok';
    }
    const meta = line.startsWith('file ') ? parseArtifactMeta(line.slice(5)) : undefined;
    if (meta === undefined) return 'abandon';
    if (!this.budget.admit(meta)) return 'over-limit';
    this.meta = meta;
    this.remaining = meta.bytes;
    // Its size was checked against the budget just above.
    this.body = Buffer.allocUnsafe(meta.bytes);
    this.bodyBytes = 0;
    if (meta.bytes === 0) this.finishArtifact();
    else this.mode = 'body';
    return 'ok';
  }

  private finishArtifact(): void {
    this.artifacts.push({ meta: this.meta!, data: this.body });
    this.body = Buffer.alloc(0);
    this.bodyBytes = 0;
    this.meta = undefined;
    this.mode = 'between';
  }

  /** Gives up on records: the rest is the code's output again. */
  private abandon(rest: Buffer): Buffer {
    if (!this.lostNoted) {
      this.lostNoted = true;
      this.notes.push(
        'some images or files were lost: other output was written while they were returned',
      );
    }
    this.header = [];
    this.headerBytes = 0;
    this.body = Buffer.alloc(0);
    this.bodyBytes = 0;
    this.mode = 'user';
    return rest;
  }
}
