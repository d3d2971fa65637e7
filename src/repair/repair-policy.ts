/**
 * How a sandbox run ended; only failures reach the policy. `unavailable`: the code never ran
 * (or its outcome is unknown) because the sandbox itself failed (no engine, a Docker timeout,
 * busy...); it is never repaired, and `FailedRun.cause` holds the typed error.
 */
export type FailureStatus =
  'error' | 'timeout' | 'oom' | 'output-limit' | 'crashed' | 'unavailable';

/** One failed run, as the `onError` hook sees it. */
export type FailedRun = {
  /** 1-based attempt number; attempt 1 is the original code. */
  attempt: number;
  /** How the run failed. */
  status: FailureStatus;
  /** The trimmed error text that a repair would be given. */
  error: string;
  /** Normalised error (see `errorFingerprint`); equal fingerprints mean the same failure. */
  fingerprint: string;
  /** The code that failed. */
  code: string;
  /**
   * For `unavailable`: the sandbox's typed error (`SandboxUnavailableError`,
   * `DockerTimeoutError`, `SandboxBusyError`...), with the host details the model never sees.
   */
  cause?: unknown;
};

/** What happens after a failed run. */
export type RepairDecision = 'repair' | 'halt';

/**
 * The onError hook: called on every failed run. Return
 * `'repair'` or `'halt'` to decide, or nothing for the default policy.
 */
export type OnRepairError = (
  failure: FailedRun,
) => RepairDecision | void | Promise<RepairDecision | void>;

/** Why the loop stopped or went on. */
export type RepairReason =
  'repairable' | 'budget' | 'repeated-error' | 'not-repairable' | 'hook' | 'hard-limit';

/** The shared repair policy of both modes. */
export type RepairPolicy = {
  /** Repairs after the first attempt; most of the gain comes in the first two rounds. */
  maxRepairs?: number;
  /** Failure kinds worth repairing; timeouts, OOM, output floods and crashes are not, by default. */
  repairable?: readonly FailureStatus[];
  /** Called on every failed run; its answer overrides the defaults. */
  onError?: OnRepairError;
};

const DEFAULT_REPAIRABLE: readonly FailureStatus[] = ['error'];

/** Repairs allowed after the first attempt when the policy does not say (`maxRepairs`). */
export const DEFAULT_MAX_REPAIRS = 2;

// However an onError hook answers, a loop never runs more attempts than this.
export const HARD_ATTEMPT_LIMIT = 10;

/**
 * Decides whether a failed run is repaired: the hook first, then the budget,
 * the repeated-error halt (same fingerprint as the previous failure) and the
 * failure kind.
 *
 * @example
 * ```ts
 * const { decision, reason } = await decideRepair({ failure, previousFingerprint, policy: { maxRepairs: 2 } });
 * ```
 */
export async function decideRepair({
  failure,
  previousFingerprint,
  policy: { maxRepairs = DEFAULT_MAX_REPAIRS, repairable = DEFAULT_REPAIRABLE, onError } = {},
}: {
  /** The run that just failed. */
  failure: FailedRun;
  /** The fingerprint of the failure before it, if any. */
  previousFingerprint?: string;
  /** Budget, repairable kinds, hook. */
  policy?: RepairPolicy;
}): Promise<{ decision: RepairDecision; reason: RepairReason }> {
  if (failure.attempt >= HARD_ATTEMPT_LIMIT) return { decision: 'halt', reason: 'hard-limit' };
  const hooked = await onError?.(failure);
  // The hook hears about it, but new code cannot fix the sandbox.
  if (failure.status === 'unavailable') return { decision: 'halt', reason: 'not-repairable' };
  if (hooked === 'repair' || hooked === 'halt') return { decision: hooked, reason: 'hook' };
  if (!repairable.includes(failure.status)) return { decision: 'halt', reason: 'not-repairable' };
  if (previousFingerprint !== undefined && previousFingerprint === failure.fingerprint) {
    return { decision: 'halt', reason: 'repeated-error' };
  }
  if (failure.attempt > maxRepairs) return { decision: 'halt', reason: 'budget' };
  return { decision: 'repair', reason: 'repairable' };
}
