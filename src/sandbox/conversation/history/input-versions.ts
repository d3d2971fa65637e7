// history/: what a conversation keeps for restoring its interpreter (cells, versioned input
// files, per-user bounds), where it is stored, and the replay that rebuilds the state from it.
import type { InterpreterHandle, KeptInput } from './interpreter-handle.ts';

/**
 * Whether a restore needs this version of an input file: it is the path's current version
 * (cells to come read it), or a kept cell ran while it was current (a replay of that cell
 * must read it, not a later version).
 *
 * @example
 * ```ts
 * const keep = handle.inputs.filter(input => isNeeded(input, handle.cells));
 * ```
 */
export function isNeeded(input: KeptInput, cells: InterpreterHandle['cells']): boolean {
  const { cell, until } = input;
  return until === undefined || cells.some(kept => kept.n >= cell && kept.n < until);
}

/**
 * Bytes held for restoring: kept cells' code and the stored versions a restore needs (a
 * version stored for two paths counts once).
 *
 * @example
 * ```ts
 * if (historyBytes(handle) > maxHistoryBytes) pruneHistory({ handle, maxHistoryBytes });
 * ```
 */
export function historyBytes(handle: Pick<InterpreterHandle, 'cells' | 'inputs'>): number {
  let total = 0;
  for (const cell of handle.cells) total += Buffer.byteLength(cell.code, 'utf8');
  const counted = new Set<string>();
  for (const input of handle.inputs) {
    if (!input.kept || counted.has(input.digest) || !isNeeded(input, handle.cells)) continue;
    counted.add(input.digest);
    total += input.bytes;
  }
  return total;
}

/**
 * Drops the oldest cells while the history passes `maxHistoryBytes`, then forgets the file
 * versions no restore needs any more. Returns the digests of stored versions no input refers
 * to now: their records are to be deleted.
 *
 * @example
 * ```ts
 * for (const digest of pruneHistory({ handle, maxHistoryBytes })) await removeInput(digest);
 * ```
 */
export function pruneHistory({
  handle,
  maxHistoryBytes,
  reserveBytes = 0,
}: {
  /** The conversation's handle (changed in place). */
  handle: InterpreterHandle;
  /** The bound. */
  maxHistoryBytes: number;
  /** Bytes to make room for besides (a file about to be stored). */
  reserveBytes?: number;
}): string[] {
  while (handle.cells.length > 0 && historyBytes(handle) + reserveBytes > maxHistoryBytes) {
    handle.cells.shift();
    handle.dropped++;
  }
  const stored = new Set(handle.inputs.filter(input => input.kept).map(input => input.digest));
  handle.inputs = handle.inputs.filter(input => isNeeded(input, handle.cells));
  for (const input of handle.inputs) if (input.kept) stored.delete(input.digest);
  return [...stored];
}

/**
 * The versions to place before replaying cell `n`: those that arrived by then, are still
 * current at it and were not placed yet (one per path, oldest arrival first). `placed` collects
 * them.
 *
 * @example
 * ```ts
 * const placed = new Set<KeptInput>();
 * for (const cell of handle.cells) send(versionsFor({ inputs: handle.inputs, n: cell.n, placed }));
 * ```
 */
export function versionsFor({
  inputs,
  n,
  placed,
}: {
  /** The handle's inputs. */
  inputs: readonly KeptInput[];
  /** The cell about to run (Infinity: after the last kept cell, for the next new one). */
  n: number;
  /** Versions already placed (added to). */
  placed: Set<KeptInput>;
}): KeptInput[] {
  const due = inputs
    .filter(input => !placed.has(input) && input.cell <= n && (input.until ?? Infinity) > n)
    .sort((a, b) => a.cell - b.cell);
  for (const input of due) placed.add(input);
  return due;
}
