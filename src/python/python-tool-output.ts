import type { FailureStatus, RepairReason } from '../repair/repair-policy.ts';
import type { PythonArtifact } from './python-artifacts.ts';

/**
 * What the python tool streams, in order: `running` for each attempt,
 * `failed` when it fails, `repairing` while a fix is written (inline mode),
 * and a final `success` with the output, images and files. Failures end in a
 * thrown tool error instead, so the model sees them as errors. UIs render
 * these from the tool part's preliminary outputs.
 *
 * @example
 * ```ts
 * if (output.state === 'success') for (const image of output.images) show(image);
 * ```
 */
export type PythonToolOutput =
  | { state: 'running'; attempt: number; code: string }
  | {
      state: 'failed';
      attempt: number;
      status: FailureStatus;
      error: string;
      next: 'repair' | 'halt';
      reason: RepairReason;
    }
  | { state: 'repairing'; attempt: number }
  | {
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
    };

/** A streamed state with the tool call it belongs to; see `onAttempt`. */
export type PythonAttemptEvent = PythonToolOutput & { toolCallId: string };

/**
 * The line ending a halted failure's error text. The repair guard
 * (`repairGuardMiddleware`) recognises it in the conversation and withholds
 * the tool for the rest of the turn.
 */
export const HALT_MARKER = '[python: stop retrying — explain this failure to the user]';
