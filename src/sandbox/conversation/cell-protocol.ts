import type { RecordCaps } from '../output/record-budget.ts';

/**
 * The wire format between the host and an interpreter's supervisor (see
 * `src/sandbox/in-container/interpreter_supervisor.py`), over the container's stdin and stdout.
 */
const MAGIC = 'ATB1';

/** The supervisor's first request: it adopts `secret` and serves only requests that carry it. */
export function encodeHello(secret: string): Buffer {
  return Buffer.from(`${MAGIC} ${secret} - hello 0 0\n`, 'latin1');
}

/** What one cell request carries (the code, new input files, limits). */
export type CellRequest = {
  /** Python source of the cell. */
  code: string;
  /** Input files to place under /tmp before the cell runs (absolute paths). */
  files: ReadonlyArray<{ path: string; data: Uint8Array }>;
  /** What the cell may return (see `resolveRecordCaps`); the supervisor and kernel keep to it too. */
  caps: Required<RecordCaps>;
  /** Wall-clock limit; the supervisor stops the cell a little after it too. */
  timeoutMs: number;
  /** Cap per output stream, bytes. */
  maxOutputBytes: number;
  /** Restoring state: the kernel returns no images, files or shown values for it. */
  replay: boolean;
  /**
   * The conversation's seed, sent with the first cell of a new interpreter: `random` and
   * NumPy's global generator start from it, so a replay draws the same numbers.
   */
  seed?: number;
};

/**
 * A cell request as buffers to write in order: the request line, the header JSON, the code,
 * then each file's bytes.
 */
export function encodeCell({
  secret,
  requestId,
  request,
}: {
  /** The interpreter's secret (from its handle). */
  secret: string;
  /** A fresh id; the supervisor's frames for this cell carry it. */
  requestId: string;
  /** The cell. */
  request: CellRequest;
}): Buffer[] {
  const code = Buffer.from(request.code, 'utf8');
  const header = Buffer.from(
    JSON.stringify({
      code: code.length,
      files: request.files.map(file => ({ path: file.path, bytes: file.data.byteLength })),
      caps: request.caps,
      timeoutMs: request.timeoutMs,
      maxOutputBytes: request.maxOutputBytes,
      maxRecords: request.caps.records,
      // A shown value's text is cut like a stream.
      maxResultChars: request.maxOutputBytes,
      replay: request.replay,
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
    }),
    'utf8',
  );
  const bodyBytes =
    code.length + request.files.reduce((sum, file) => sum + file.data.byteLength, 0);
  return [
    Buffer.from(`${MAGIC} ${secret} ${requestId} cell ${header.length} ${bodyBytes}\n`, 'latin1'),
    header,
    code,
    ...request.files.map(file =>
      Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength),
    ),
  ];
}

/** A frame from the supervisor, as the parser hands it on. */
export type CellFrame =
  | { type: 'out' | 'err'; data: Buffer }
  | { type: 'rec'; data: Buffer }
  | { type: 'done'; outcome: CellOutcomeLine }
  | { type: 'ready' };

/** The `done` frame's JSON: the cell's exit code, or how the supervisor stopped it. */
export type CellOutcomeLine = {
  exitCode?: number;
  status?: 'timeout' | 'output-limit' | 'crashed';
  /** A timeout the cell ended by itself on its KeyboardInterrupt: the kernel lives on. */
  interrupted?: boolean;
};

const FRAME_PREFIX = Buffer.from(`\0${MAGIC} `, 'latin1');

/** The supervisor's `ready` frame as it is written (the kernel finished its pre-imports). */
export const READY_FRAME = Buffer.from(`\0${MAGIC} - ready 0\n`, 'latin1');
const MAX_HEADER_BYTES = 128;
const MAX_DONE_BYTES = 4096;

/**
 * Parses the supervisor's frames (`\0ATB1 <request id> <type> <length>\n<payload>`) from the
 * container's stdout. Frames for other requests (another replica's cell) are skipped without
 * being buffered. Payload sizes are checked before anything is allocated: `out`/`err` pieces
 * stream through, a `rec` must fit `allow(bytes)` (the caller's record budget), and `done` is
 * small. Anything else is a protocol error: the caller stops the cell.
 */
export class CellFrameParser {
  private readonly requestId: string;
  private readonly onFrame: (frame: CellFrame) => void;
  private readonly allowRecord: (bytes: number) => boolean;
  private header: Buffer = Buffer.alloc(0);
  private remaining = 0;
  private type: string | undefined;
  private mine = false;
  private body: Buffer | undefined;
  private bodyBytes = 0;
  private synced: boolean;
  /** Set once the stream broke the protocol: what was wrong. */
  error: string | undefined;

  constructor({
    requestId,
    onFrame,
    allowRecord,
    joinMidStream = false,
  }: {
    /** The cell's request id; frames with another id are skipped. */
    requestId: string;
    /** Receives this cell's frames (and `ready`). */
    onFrame: (frame: CellFrame) => void;
    /** Asked before a record of this many bytes is read; false is a protocol error. */
    allowRecord: (bytes: number) => boolean;
    /**
     * The stream may start inside a frame: an attach to a running interpreter (another
     * replica's cell in flight) gets its output from the attach on. Bytes before the first
     * frame header are skipped instead of breaking the protocol.
     */
    joinMidStream?: boolean;
  }) {
    this.requestId = requestId;
    this.onFrame = onFrame;
    this.allowRecord = allowRecord;
    this.synced = !joinMidStream;
  }

  /** Feeds stdout payload bytes; false once the stream broke the protocol. */
  push(chunk: Buffer): boolean {
    let data = chunk;
    if (!this.synced) {
      const joined = this.header.length > 0 ? Buffer.concat([this.header, chunk]) : chunk;
      const at = joined.indexOf(FRAME_PREFIX);
      if (at < 0) {
        // Held over: the start of a header split across chunks.
        this.header = Buffer.from(
          joined.subarray(Math.max(0, joined.length - FRAME_PREFIX.length + 1)),
        );
        return true;
      }
      this.synced = true;
      this.header = Buffer.alloc(0);
      data = joined.subarray(at);
    }
    let offset = 0;
    while (offset < data.length && this.error === undefined) {
      if (this.type === undefined) {
        const newline = data.indexOf(10, offset);
        const end = newline >= 0 ? newline : data.length;
        this.header = Buffer.concat([this.header, data.subarray(offset, end)]);
        offset = newline >= 0 ? newline + 1 : data.length;
        if (this.header.length > MAX_HEADER_BYTES) return this.fail('a frame header is too long');
        if (newline >= 0) this.startFrame();
        continue;
      }
      const take = Math.min(this.remaining, data.length - offset);
      const piece = data.subarray(offset, offset + take);
      offset += take;
      this.remaining -= take;
      if (this.mine) this.payload(piece);
      if (this.remaining === 0) this.endFrame();
    }
    return this.error === undefined;
  }

  private fail(error: string): false {
    this.error ??= error;
    return false;
  }

  private startFrame(): void {
    const header = this.header;
    this.header = Buffer.alloc(0);
    if (!header.subarray(0, FRAME_PREFIX.length).equals(FRAME_PREFIX)) {
      this.fail('output outside a frame');
      return;
    }
    const [id, type, length] = header.subarray(FRAME_PREFIX.length).toString('latin1').split(' ');
    if (id === undefined || type === undefined || !/^\d{1,10}$/.test(length ?? '')) {
      this.fail('a malformed frame header');
      return;
    }
    this.type = type;
    this.remaining = Number(length);
    this.mine = id === this.requestId || (id === '-' && type === 'ready');
    if (this.mine) {
      if (!['out', 'err', 'rec', 'done', 'ready'].includes(type)) {
        this.fail(`an unknown frame type ${JSON.stringify(type.slice(0, 20))}`);
        return;
      }
      if (type === 'done' && this.remaining > MAX_DONE_BYTES) {
        this.fail('an oversized done frame');
        return;
      }
      if (type === 'rec' && !this.allowRecord(this.remaining)) {
        this.fail('a record over the limits');
        return;
      }
      if (type === 'rec' || type === 'done') {
        // Sized by the checks above, before a byte of it arrived.
        this.body = Buffer.allocUnsafe(this.remaining);
        this.bodyBytes = 0;
      }
    }
    if (this.remaining === 0) this.endFrame();
  }

  private payload(piece: Buffer): void {
    if (this.body !== undefined) {
      piece.copy(this.body, this.bodyBytes);
      this.bodyBytes += piece.length;
    } else if (this.type === 'out' || this.type === 'err') {
      this.onFrame({ type: this.type, data: piece });
    }
  }

  private endFrame(): void {
    const { type, body, mine } = this;
    this.type = undefined;
    this.body = undefined;
    this.mine = false;
    if (!mine) return;
    if (type === 'ready') this.onFrame({ type: 'ready' });
    else if (type === 'rec') this.onFrame({ type: 'rec', data: body ?? Buffer.alloc(0) });
    else if (type === 'done') {
      const outcome = parseOutcome(body ?? Buffer.alloc(0));
      if (outcome === undefined) this.fail('a malformed done frame');
      else this.onFrame({ type: 'done', outcome });
    }
  }
}

function parseOutcome(body: Buffer): CellOutcomeLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const { exitCode, status, interrupted } = (value ?? {}) as CellOutcomeLine;
  if (exitCode !== undefined && !(Number.isInteger(exitCode) && exitCode >= 0 && exitCode < 256))
    return undefined;
  if (status !== undefined && !['timeout', 'output-limit', 'crashed'].includes(status))
    return undefined;
  if (exitCode === undefined && status === undefined) return undefined;
  return {
    ...(exitCode !== undefined ? { exitCode } : {}),
    ...(status ? { status } : {}),
    // Only a timeout can be interrupted; anything else claiming it is a stopped cell.
    ...(interrupted === true && status === 'timeout' ? { interrupted: true } : {}),
  };
}
