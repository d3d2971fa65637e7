/** Notes a run may return (the bootstrap keeps to it; the host stops a run past it). */
export const MAX_RUN_NOTES = 20;

/**
 * What one run may return besides its printed output, counted on the host. The bootstrap
 * keeps to the same caps, so only code that forges records (it can reach the record prefix,
 * see `RecordStream`) ever passes one.
 */
export type RecordCaps = {
  /** Images (`maxImages`). */
  images: number;
  /** Files (`maxOutputFiles`). */
  files: number;
  /** Bytes of all images and files together (`maxArtifactBytes`). */
  bytes: number;
  /** Notes. */
  notes?: number;
  /** Values a cell shows (its last expression, `display()`); their bytes count in `bytes`. Default 0. */
  results?: number;
  /**
   * Records of any kind, malformed ones included; default: images + files + notes + results,
   * plus one chart record per image when there are results (cells return charts).
   */
  records?: number;
};

/** A record as far as the budget cares: its kind, and for images and files its size. */
export type BudgetedRecord =
  | { kind: 'image' | 'file' | 'result' | 'chart'; bytes: number }
  | { kind: 'note' }
  | { kind: 'malformed' };

type Cap = keyof Required<RecordCaps>;

/** `caps` with the defaults filled in (what the bootstrap is told, and what the host counts). */
export function resolveRecordCaps({
  images,
  files,
  bytes,
  notes = MAX_RUN_NOTES,
  results = 0,
  records = images + files + notes + results + (results > 0 ? images : 0),
}: RecordCaps): Required<RecordCaps> {
  return { images, files, bytes, notes, results, records };
}

/** How each cap is named to users (its option where it has one). */
const CAP_NAMES: Record<Cap, string> = {
  images: 'images (maxImages)',
  files: 'files (maxOutputFiles)',
  bytes: 'bytes of images and files (maxArtifactBytes)',
  notes: 'notes',
  results: 'shown values (maxResults)',
  records: 'records',
};

/**
 * Host-side counts of the records one run returns: images, files, their bytes, notes, and
 * records in all. A reader asks `admit` when a record's header arrives, before it allocates
 * anything for the record; past any cap `admit` says no (and keeps saying no), and the run
 * must end as `output-limit` with its process tree killed. One budget per run (or per cell of
 * a long-lived interpreter), shared by both of its output streams.
 *
 * @example
 * ```ts
 * const budget = new RecordBudget({ images: 10, files: 20, bytes: 8 << 20 });
 * if (!budget.admit({ kind: 'file', bytes: 0 })) stopRun('output-limit'); // budget.note() says why
 * ```
 */
export class RecordBudget {
  /** The caps, defaults filled in. */
  readonly caps: Required<RecordCaps>;
  private readonly used: Record<Cap, number> = {
    images: 0,
    files: 0,
    bytes: 0,
    notes: 0,
    results: 0,
    records: 0,
  };
  private passed: Cap | undefined;

  constructor(caps: RecordCaps) {
    this.caps = resolveRecordCaps(caps);
  }

  /** True when the record fits; false past a cap (then always false: the run must stop). */
  admit(record: BudgetedRecord): boolean {
    if (this.passed !== undefined) return false;
    const counts: Array<[Cap, number]> = [['records', 1]];
    if (record.kind === 'image') counts.push(['images', 1], ['bytes', record.bytes]);
    else if (record.kind === 'file') counts.push(['files', 1], ['bytes', record.bytes]);
    else if (record.kind === 'result') counts.push(['results', 1], ['bytes', record.bytes]);
    else if (record.kind === 'chart') counts.push(['bytes', record.bytes]);
    else if (record.kind === 'note') counts.push(['notes', 1]);
    for (const [cap, n] of counts) {
      if (this.used[cap] + n > this.caps[cap]) {
        this.passed = cap;
        return false;
      }
    }
    for (const [cap, n] of counts) this.used[cap] += n;
    return true;
  }

  /** The cap that stopped the run, or undefined while every record fitted. */
  get exceeded(): Cap | undefined {
    return this.passed;
  }

  /** A note saying which cap stopped the run, or undefined while every record fitted. */
  note(): string | undefined {
    if (this.passed === undefined) return undefined;
    const cap = this.passed;
    return `the run was stopped: it returned more than ${this.caps[cap]} ${CAP_NAMES[cap]}`;
  }
}
