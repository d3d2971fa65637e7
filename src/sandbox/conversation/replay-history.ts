import { trimError } from '../../repair/trim-error.ts';
import type { InterpreterRestore } from '../types.ts';
import type { CellRequest } from './cell-protocol.ts';
import type { ConversationHistory, InterpreterHandle, Owner } from './conversation-history.ts';
import type { PlacedInterpreter } from './interpreter-placement.ts';
import { runCell } from './run-cell.ts';

/** What a replay left: the restore record, files still to send, and whether the interpreter died. */
export type ReplayOutcome = {
  restore: InterpreterRestore;
  /** Kept input files not yet placed (there was no cell to carry them). */
  pendingFiles: Array<{ path: string; data: Uint8Array }>;
  /** The interpreter ended during the replay (a cell timed out, crashed or ran out of memory again). */
  ended: boolean;
};

/**
 * Rebuilds a conversation's state in a new interpreter: places its kept input files, then runs
 * its kept cells again in order (silently: their output, images and files were returned when
 * they first ran). Cells that fail again are recorded, not retried; the replay stops if one
 * ends the interpreter.
 *
 * @example
 * ```ts
 * const { restore } = await replayHistory({ placed, handle, owner, history, reason: 'idle', limits, dockerTimeoutMs: 15_000 });
 * ```
 */
export async function replayHistory({
  placed,
  handle,
  owner,
  history,
  reason,
  limits,
  dockerTimeoutMs,
  idleMs,
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
  /** Each replayed cell's limits (those of the cell that triggered the restore). */
  limits: Omit<CellRequest, 'code' | 'files' | 'replay'>;
  /** Deadline of each Docker call. */
  dockerTimeoutMs: number;
  /** The interpreter's idle expiry, named in the summary. */
  idleMs: number;
  /** Aborting stops the replay (and kills the interpreter). */
  abortSignal?: AbortSignal | undefined;
}): Promise<ReplayOutcome> {
  const startedAt = performance.now();
  const { files, missing } = await history.loadInputs(owner, handle);
  let pending = files;
  let cells = 0;
  let ended = false;
  const failed: InterpreterRestore['failed'] = [];
  for (const cell of handle.cells) {
    const run = await runCell({
      container: placed.container,
      secret: placed.secret,
      request: { ...limits, code: cell.code, files: pending, replay: true },
      dockerTimeoutMs,
      abortSignal,
    });
    pending = [];
    if (run.status === 'success') cells++;
    else failed.push({ cell: cell.n, status: run.status, error: lastLine(run.stderr, run.status) });
    if (run.ended) {
      ended = true;
      break;
    }
  }
  const restore: InterpreterRestore = {
    method: 'replay',
    reason,
    cells,
    failed,
    dropped: handle.dropped,
    missingFiles: missing.map(path => path.replace(/^\/tmp\//, '')),
    ms: Math.round(performance.now() - startedAt),
    summary: '',
  };
  restore.summary = restoreSummary({ restore, kept: handle.cells.length, ended, idleMs });
  return { restore, pendingFiles: pending, ended };
}

/** The one line the model reads about a restore. */
export function restoreSummary({
  restore,
  kept,
  ended,
  idleMs,
}: {
  restore: InterpreterRestore;
  /** Cells there were to re-run. */
  kept: number;
  /** The replay ended the interpreter: it starts empty. */
  ended: boolean;
  /** Idle expiry, for the reason. */
  idleMs: number;
}): string {
  const why =
    restore.reason === 'idle'
      ? `it had been idle for ${Math.round(idleMs / 60_000)} minutes`
      : restore.reason === 'engine'
        ? 'its sandbox host was unreachable'
        : 'it had stopped';
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (ended) {
    const cell = restore.failed.at(-1);
    return (
      `The Python interpreter was replaced (${why}) and its state could not be restored: earlier ` +
      `cell ${cell?.cell ?? '?'} stopped it again (${cell?.status ?? 'crashed'}). It starts empty: ` +
      'variables, imports and files from earlier cells are gone.'
    );
  }
  const parts = [
    kept === 0
      ? `The Python interpreter was replaced (${why}); no earlier cell was kept to re-run`
      : `Python state restored by re-running ${restore.cells === kept ? '' : `${restore.cells} of `}${plural(kept, 'earlier cell')} (${why})`,
  ];
  for (const { cell, status, error } of restore.failed) {
    parts.push(
      `cell ${cell} failed when re-run (${status}: ${error}), so what it defined is missing`,
    );
  }
  if (restore.dropped > 0) {
    parts.push(
      `${plural(restore.dropped, 'older cell')} ${restore.dropped === 1 ? 'was' : 'were'} not kept, so what ${restore.dropped === 1 ? 'it' : 'they'} defined is missing`,
    );
  }
  if (restore.missingFiles.length > 0) {
    parts.push(`input files not restored: ${restore.missingFiles.join(', ')}`);
  }
  return `${parts.join('; ')}.`;
}

function lastLine(stderr: string, status: string): string {
  const line = trimError(stderr).trim().split('\n').at(-1) ?? '';
  return (line || status).slice(0, 200);
}
