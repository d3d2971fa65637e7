import type { FailureStatus, RepairReason } from '../repair/repair-policy.ts';
import type { PythonArtifact } from './python-artifacts.ts';
import type { PythonResult } from './python-results.ts';

/**
 * What the python tool streams, in order: `running` for each attempt,
 * `failed` when it fails, `repairing` while a fix is written (inline mode),
 * and a final `success` with the output, images and files, or a final
 * `failed`, which the model reads as a tool error (see `pythonModelOutput`).
 * UIs render these from the tool part's preliminary outputs.
 *
 * @example
 * ```ts
 * if (output.state === 'success') for (const image of output.images) show(image);
 * ```
 */
export type PythonToolOutput =
  | {
      state: 'running';
      attempt: number;
      code: string;
      /** What the code printed so far (the last 2,000 characters), streamed while it runs. */
      output?: string;
      /** Values a notebook cell showed so far (their images come with the result). */
      results?: PythonResult[];
    }
  | ({
      state: 'failed';
      attempt: number;
      status: FailureStatus;
      error: string;
      /** The normalised error: equal fingerprints mean the same failure. */
      fingerprint: string;
      next: 'repair' | 'halt';
      reason: RepairReason;
    } & CellState)
  | { state: 'repairing'; attempt: number }
  | ({
      state: 'success';
      attempt: number;
      attempts: number;
      stdout: string;
      truncated: boolean;
      code: string;
      /** Figures as PNG (see `PythonArtifact`). */
      images: PythonArtifact[];
      /** Files written to /tmp/outputs; offer them as downloads. */
      files: PythonArtifact[];
      /** What the sandbox's caps left out. */
      notes: string[];
    } & CellState);

/**
 * With a conversation interpreter: the cell's number, and (once, on the cell after the
 * interpreter was lost) the line the model reads about how its state was restored.
 */
export type CellState = {
  /** The cell's number in the conversation. */
  cell?: number;
  /** Values the cell showed (its last expression, `display()` calls), in order. */
  results?: PythonResult[];
  /** E.g. `Python state restored by re-running 4 earlier cells (it had been idle for 10 minutes).` */
  restored?: string;
};

/** A streamed state with the tool call it belongs to; see `onAttempt`. */
export type PythonAttemptEvent = PythonToolOutput & { toolCallId: string };
