import type { FailureStatus, RepairReason } from '../repair/repair-policy.ts';
import type { PythonArtifact } from './python-artifacts.ts';

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
  | { state: 'running'; attempt: number; code: string }
  | {
      state: 'failed';
      attempt: number;
      status: FailureStatus;
      error: string;
      /** The normalised error: equal fingerprints mean the same failure. */
      fingerprint: string;
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
