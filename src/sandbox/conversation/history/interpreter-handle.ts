import { randomInt } from 'node:crypto';

/** A cell kept for restoring (it succeeded when it ran). */
export type KeptCell = {
  /** The cell's number in the conversation. */
  n: number;
  /** Its code. */
  code: string;
  /** Its own time limit: a replay gives it the same, not the limit of the cell that restores. */
  timeoutMs: number;
};

/**
 * One version of an input file: the bytes the app sent for a path from cell `cell` on (until
 * a newer version replaced it at cell `until`). Its bytes are kept in the store under `digest`
 * when `kept`.
 */
export type KeptInput = {
  /** Absolute path under /tmp. */
  path: string;
  /**
   * A keyed hash of the bytes (under the store's id key): an unchanged file is not sent twice,
   * and nobody who can list the store's keys can tell which file it is.
   */
  digest: string;
  /** Size. */
  bytes: number;
  /** The cell it arrived with. */
  cell: number;
  /** The cell whose newer version replaced it; undefined while it is the current one. */
  until?: number;
  /** False when it did not fit `maxHistoryBytes` (or its record is gone): it cannot be restored. */
  kept: boolean;
  /** When its record was last written (records are rewritten before they would expire). */
  savedAt: number;
};

/**
 * What the store holds per (user, conversation): where the live interpreter is (engine,
 * container, the secret its supervisor serves) and what is needed to rebuild it. Replaced only
 * by a complete newer version: a restore that fails keeps it as it was.
 */
export type InterpreterHandle = {
  v: 2;
  /** The engine's name (`DockerSandbox#engineStatus`). */
  engine: string;
  /** The interpreter's container. */
  containerId: string;
  /** The secret the interpreter's supervisor checks on every request. */
  secret: string;
  /** When the container was started (epoch ms). */
  startedAt: number;
  /** When the last cell ended (epoch ms). */
  usedAt: number;
  /** The sandbox instance (replica) that ran the last cell: its `close()` may remove the interpreter, others' may not. */
  servedBy: string;
  /** Cells run in this conversation, failed ones included. */
  cellCount: number;
  /** Successful cells kept for restoring, oldest first. */
  cells: KeptCell[];
  /** Successful cells dropped from `cells` to stay within `maxHistoryBytes`. */
  dropped: number;
  /** Versions of input files, oldest first (old ones only while a kept cell read them). */
  inputs: KeptInput[];
  /** Paths whose current version the live interpreter lacks (gone at its restore): taken again when sent. */
  absent: string[];
  /** Restores in a row that a kept cell ended; at the second, the history is given up. */
  failedRestores: number;
  /** Seeds `random` and NumPy in each new interpreter of the conversation, so replays repeat their draws. */
  seed: number;
};

/**
 * A handle for a new interpreter, carrying the history of `previous` (if any).
 *
 * @example
 * ```ts
 * const handle = newHandle({ placed, servedBy: sandbox.instanceId, previous: stored });
 * ```
 */
export function newHandle({
  placed,
  servedBy,
  previous,
}: {
  /** The new interpreter. */
  placed: {
    engine: { name: string };
    id: string;
    secret: string;
    startedAt: number;
  };
  /** This sandbox instance. */
  servedBy: string;
  /** The conversation's handle so far. */
  previous?: InterpreterHandle | undefined;
}): InterpreterHandle {
  return {
    v: 2,
    engine: placed.engine.name,
    containerId: placed.id,
    secret: placed.secret,
    startedAt: placed.startedAt,
    usedAt: Date.now(),
    servedBy,
    cellCount: previous?.cellCount ?? 0,
    cells: [...(previous?.cells ?? [])],
    dropped: previous?.dropped ?? 0,
    inputs: (previous?.inputs ?? []).map(input => ({ ...input })),
    absent: [],
    failedRestores: previous?.failedRestores ?? 0,
    seed: previous?.seed ?? randomInt(2 ** 31),
  };
}
