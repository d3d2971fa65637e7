import type { SandboxStatus } from '../../types.ts';
import { isNeeded } from './input-versions.ts';
import type { InterpreterHandle } from './interpreter-handle.ts';

/**
 * The line the model reads when its cell ended the interpreter (timed out, ran out of memory,
 * crashed, passed an output cap): its variables are gone now, not only at the next cell, and
 * what the next cell will restore from the history.
 *
 * @example
 * ```ts
 * if (run.ended) result.ended = endedSummary({ status: run.status, handle });
 * ```
 */
export function endedSummary({
  status,
  handle,
}: {
  /** How the cell ended. */
  status: SandboxStatus;
  /** The conversation's handle, the cell already recorded. */
  handle: InterpreterHandle;
}): string {
  const kept = handle.cells.length;
  const files = [
    ...new Set(
      handle.inputs
        .filter(input => input.kept && input.until === undefined && isNeeded(input, handle.cells))
        .map(input => input.path.replace(/^\/tmp\//, '')),
    ),
  ];
  const what =
    kept === 0
      ? 'The next cell starts a new, empty interpreter'
      : `The next cell restores them by re-running ${kept} kept earlier cell${kept === 1 ? '' : 's'} first`;
  const lost = handle.dropped > 0 ? ` (${handle.dropped} older not kept)` : '';
  const placed = files.length > 0 ? `, with input files ${files.slice(0, 5).join(', ')}` : '';
  return (
    `The Python interpreter ended with this cell (${status}): its variables, imports and files ` +
    `are gone. ${what}${lost}${placed}.`
  );
}
