import { trimError } from '../../../repair/trim-error.ts';
import type { InterpreterRestore } from '../../types.ts';
import type { CellRequest } from '../cell-protocol.ts';
import type { PlacedInterpreter } from '../interpreter-placement.ts';
import { runCell } from '../run-cell.ts';
import type { ConversationHistory, Owner } from './conversation-history.ts';
import { versionsFor } from './input-versions.ts';
import type { InterpreterHandle, KeptInput } from './interpreter-handle.ts';
import { restoreSummary } from './restore-summary.ts';

/** What a replay left: the restore record, files still to send, and whether the interpreter died. */
export type ReplayOutcome = {
  restore: InterpreterRestore;
  /** Current file versions not placed yet (no kept cell came after them): sent with the next cell. */
  pendingFiles: Array<{ path: string; data: Uint8Array }>;
  /** Paths whose current version could not be placed (not kept, or its record expired). */
  absent: string[];
  /** The interpreter ended during the replay (a cell timed out, crashed or ran out of memory again). */
  ended: boolean;
  /** A replayed cell carried the conversation's seed (else the next cell must). */
  seeded: boolean;
};

/**
 * Rebuilds a conversation's state in a new interpreter: runs its kept cells again in order,
 * each with its own time limit and after the input file versions it saw when it first ran
 * (silently: their output, images and files were returned then). Cells that fail again are
 * recorded, not retried; the replay stops if one ends the interpreter, and starts no cell
 * that could run past `deadlineMs` (those are counted as not re-run).
 *
 * @example
 * ```ts
 * const { restore } = await replayHistory({ placed, handle, owner, history, reason: 'idle', limits, idleMs, deadlineMs: 120_000 });
 * ```
 */
export async function replayHistory({
  placed,
  handle,
  owner,
  history,
  reason,
  limits,
  idleMs,
  deadlineMs,
  abortSignal,
}: {
  /** The new interpreter. */
  placed: PlacedInterpreter;
  /** The conversation's handle (cells and inputs to restore). */
  handle: InterpreterHandle;
  /** Whose conversation. */
  owner: Owner;
  /** Where the inputs are kept. */
  history: ConversationHistory;
  /** Why the old interpreter was gone. */
  reason: InterpreterRestore['reason'];
  /** Output caps of the replayed cells (each keeps its own time limit). */
  limits: Omit<CellRequest, 'code' | 'files' | 'replay' | 'timeoutMs'>;
  /** The interpreter's idle expiry, named in the summary. */
  idleMs: number;
  /** The whole replay's bound. */
  deadlineMs: number;
  /** Aborting stops the replay (and kills the interpreter). */
  abortSignal?: AbortSignal | undefined;
}): Promise<ReplayOutcome> {
  const startedAt = performance.now();
  const placedVersions = new Set<KeptInput>();
  const missing = new Set<string>();
  const absent = new Set<string>();
  const load = async (n: number) => {
    const files: Array<{ path: string; data: Uint8Array }> = [];
    for (const input of versionsFor({ inputs: handle.inputs, n, placed: placedVersions })) {
      const data = await history.loadInput(owner, input);
      if (data !== undefined) files.push({ path: input.path, data });
      else {
        missing.add(input.path);
        if (input.until === undefined) absent.add(input.path);
      }
    }
    return files;
  };
  let cells = 0;
  let skipped = 0;
  let seeded = false;
  let ended = false;
  const failed: InterpreterRestore['failed'] = [];
  for (const cell of handle.cells) {
    if (ended || performance.now() - startedAt + cell.timeoutMs > deadlineMs) {
      skipped++;
      continue;
    }
    const seed = seeded ? {} : { seed: handle.seed };
    seeded = true;
    const run = await runCell({
      driver: placed.engine.driver,
      id: placed.id,
      secret: placed.secret,
      request: {
        ...{ ...limits, ...seed, timeoutMs: cell.timeoutMs, code: cell.code },
        files: await load(cell.n),
        replay: true,
      },
      abortSignal,
    });
    if (run.status === 'success') cells++;
    else failed.push({ cell: cell.n, status: run.status, error: lastLine(run.stderr, run.status) });
    if (run.ended) ended = true;
  }
  // After an ending nothing more is placed: the outcome says the interpreter is gone.
  const pendingFiles = ended ? [] : await load(Number.POSITIVE_INFINITY);
  const restore: InterpreterRestore = {
    method: 'replay',
    reason,
    cells,
    failed,
    dropped: handle.dropped,
    notRerun: ended ? 0 : skipped,
    missingFiles: [...missing].map(path => path.replace(/^\/tmp\//, '')),
    ms: Math.round(performance.now() - startedAt),
    summary: '',
  };
  return { restore, pendingFiles, absent: [...absent], ended, seeded };
}

/** The restore record's line for the model, once the outcome of the replay is known. */
export function summarize({
  restore,
  kept,
  outcome,
  idleMs,
}: {
  restore: InterpreterRestore;
  /** Cells there were to re-run. */
  kept: number;
  /** What became of the history. */
  outcome: Parameters<typeof restoreSummary>[0]['outcome'];
  /** Idle expiry, for the reason. */
  idleMs: number;
}): InterpreterRestore {
  return { ...restore, summary: restoreSummary({ restore, kept, outcome, idleMs }) };
}

function lastLine(stderr: string, status: string): string {
  const line = trimError(stderr).trim().split('\n').at(-1) ?? '';
  return (line || status).slice(0, 200);
}
