// run/: one-shot runs: arguments checked, a warm pool of started containers, the wait queue, a run
// in one container.
import { createNonce, encodeRunInput, markerPrefix } from '../in-container/bootstrap.ts';
import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import type { EngineDriver } from '../driver/engine-driver.ts';
import { OutputCollector } from '../output/output-collector.ts';
import { type RecordCaps, resolveRecordCaps } from '../output/record-budget.ts';
import type { SandboxContainer } from './sandbox-container.ts';
import { SUPERVISOR_UNSAFE_EXIT } from '../in-container/bootstrap.ts';
import type { SandboxOutputChunk, SandboxResult, SandboxStatus } from '../types.ts';

/** The output is complete: both done markers arrived, or the attach stream ended. */
type OutputDone = { kind: 'marker'; exitStatus: number } | { kind: 'ended' };
/** The run must be stopped by the host. */
type Stop = { kind: 'timeout' } | { kind: 'output-limit' } | { kind: 'abort'; reason: unknown };

/** One run as the sandbox asks for it, before and after it is placed on an engine. */
export type RunRequest = {
  /** Python source. */
  code: string;
  /** Input files, already checked (absolute paths under /tmp). */
  files: ReadonlyArray<{ path: string; data: Uint8Array }>;
  /**
   * What the run may return: images, files, bytes of both together (and optionally notes and
   * records in all, see `RecordCaps`). The bootstrap keeps to them and the host counts them
   * again; past one the run ends as `output-limit`.
   */
  caps: RecordCaps;
  /** Wall-clock limit of the run. */
  timeoutMs: number;
  /** Cap per output stream, in bytes. */
  maxOutputBytes: number;
  /** Aborting kills the run; the promise rejects with the reason once the container is gone. */
  abortSignal: AbortSignal;
  /** Streaming output callback; what it throws ends the run and is rethrown as it is. */
  onOutput?: ((chunk: SandboxOutputChunk) => void) | undefined;
};

/**
 * Runs `code` in a started container and removes the container afterwards. Ends in one of
 * these ways:
 * - the supervisor's done markers arrive on both streams: they carry the code's real exit
 *   status, written by a process the code cannot read or impersonate (see
 *   `python/run_supervisor.py`) once the code's process and everything it started are gone, so the
 *   result is known without waiting ~150 ms or more for gVisor to tear the sandbox down;
 * - the attach stream ends without them (the supervisor was killed, the sandbox died): a
 *   `docker wait` gives the real exit code (`OOMKilled` -> `oom`, a signal, gVisor's silent
 *   exit 2 or the supervisor's refusal to run unprotected -> `crashed`);
 * - the wall-clock limit, an output or record cap (`RecordBudget`) or an abort: the container
 *   is killed first (Docker's own wait timeout would not kill it), then the result is reported.
 *
 * The container is removed in the background; `onRemoval` gets the removal (it settles once
 * the container is confirmed gone, or its removal failed and was reported), so the caller
 * can hold the run's slot until then. An aborted run rejects only after its container is
 * gone.
 */
export async function runInContainer({
  sandboxContainer,
  code,
  files,
  caps,
  timeoutMs,
  maxOutputBytes,
  driver,
  cleanup,
  abortSignal,
  onOutput,
  onRemoval,
}: RunRequest & {
  /** A started container, already taken from the pool. */
  sandboxContainer: SandboxContainer;
  /** Its engine. */
  driver: EngineDriver;
  /** Removes the container afterwards. */
  cleanup: CleanupTracker;
  /** Gets the container's removal, which settles once it is gone (or could not be removed). */
  onRemoval?: (removal: Promise<void>) => void;
}): Promise<SandboxResult> {
  const { id, stream } = sandboxContainer;
  const startedAt = performance.now();
  const nonce = createNonce();
  const proof = createNonce();
  let finish: (done: OutputDone) => void = () => {};
  const outputDone = new Promise<OutputDone>(resolve => (finish = resolve));
  let stop: (stop: Stop) => void = () => {};
  const stopped = new Promise<Stop>(resolve => (stop = resolve));
  let callbackError: { error: unknown } | undefined;
  const limits = resolveRecordCaps(caps);
  const collector = new OutputCollector({
    marker: markerPrefix(nonce),
    proof: markerPrefix(proof),
    maxBytes: maxOutputBytes,
    caps: limits,
    onOutput: guardedCallback(onOutput, error => {
      callbackError ??= { error };
      stop({ kind: 'abort', reason: error });
    }),
    onLimit: () => stop({ kind: 'output-limit' }),
    onMarkers: exitStatus => finish({ kind: 'marker', exitStatus }),
  });
  const waitController = new AbortController();
  const onEnd = () => finish({ kind: 'ended' });
  const onAbort = () => stop({ kind: 'abort', reason: abortSignal?.reason });
  const timer = setTimeout(() => stop({ kind: 'timeout' }), timeoutMs);
  abortSignal?.addEventListener('abort', onAbort, { once: true });
  let removal: Promise<void> | undefined;
  const remove = (): Promise<void> => {
    if (removal === undefined) {
      stream.destroy();
      removal = cleanup.remove(id);
      onRemoval?.(removal);
    }
    return removal;
  };
  try {
    sandboxContainer.take((which, payload) => collector.push(which, payload));
    stream.onEnd(onEnd);
    if (abortSignal?.aborted) onAbort();
    const input = encodeRunInput({ proof, nonce, code, files, caps: limits });
    for (const chunk of input.slice(0, -1)) stream.write(chunk);
    stream.end(input.at(-1));

    const done = await Promise.race([outputDone, stopped]);
    // Without the supervisor's word, Docker's: the exit code once the container is down.
    const ending =
      done.kind === 'ended'
        ? await Promise.race([
            driver.waitExit(id, waitController.signal).then(exitCode => ({
              kind: 'exit' as const,
              exitCode,
            })),
            stopped,
          ])
        : done;
    let exitCode: number | null = null;
    let status: SandboxStatus;
    if (ending.kind === 'marker') {
      exitCode = ending.exitStatus;
      status = exitCode === 0 ? 'success' : exitCode < 128 ? 'error' : 'crashed';
    } else if (ending.kind === 'exit') {
      exitCode = ending.exitCode;
      status = await classify({
        exitCode,
        printed: () => {
          const { stdout, stderr } = collector.result();
          return stdout.length > 0 || stderr.length > 0;
        },
        id,
        driver,
      });
    } else if (ending.kind === 'abort') {
      // Force-removal kills it; the caller hears back once it is gone.
      await remove();
      throw callbackError?.error ?? ending.reason;
    } else {
      stream.destroy();
      await driver.kill(id);
      status = ending.kind;
    }
    collector.flush();
    const output = collector.result();
    return { status, exitCode, ...output, durationMs: Math.round(performance.now() - startedAt) };
  } finally {
    clearTimeout(timer);
    abortSignal?.removeEventListener('abort', onAbort);
    waitController.abort();
    void remove();
  }
}

/**
 * The status for a container exit code (no supervisor marker). 0 is `success`; anything
 * else is looked up: `OOMKilled` -> `oom`; the supervisor's refusal to run unprotected
 * (`SUPERVISOR_UNSAFE_EXIT`) -> `crashed`; 2 or a signal -> `crashed` (gVisor ends the whole
 * sandbox with exit 2 and no output on a fork bomb; with output it is the code's own exit 2),
 * else `error`.
 */
async function classify({
  exitCode,
  printed,
  id,
  driver,
}: {
  exitCode: number;
  printed: () => boolean;
  id: string;
  driver: EngineDriver;
}): Promise<SandboxStatus> {
  if (exitCode === 0) return 'success';
  const state = await driver.state(id, { settle: true });
  return exitStatus({ exitCode, oomKilled: state?.oomKilled ?? false, printed: printed() });
}

/**
 * The status of a run that ended without the supervisor's done marker, from the container's
 * real exit state only (see `classify`).
 *
 * @example
 * ```ts
 * exitStatus({ exitCode: 137, oomKilled: false, printed: true }); // 'crashed'
 * ```
 */
export function exitStatus({
  exitCode,
  oomKilled,
  printed,
}: {
  /** The container's exit code (`docker wait`). */
  exitCode: number;
  /** Docker's `State.OOMKilled`. */
  oomKilled: boolean;
  /** Whether the run printed anything (tells the code's exit 2 from gVisor's). */
  printed: boolean;
}): SandboxStatus {
  if (exitCode === 0) return 'success';
  if (oomKilled) return 'oom';
  if (exitCode === SUPERVISOR_UNSAFE_EXIT) return 'crashed';
  if (exitCode === 2 && printed) return 'error';
  if (exitCode === 2 || exitCode >= 128) return 'crashed';
  return 'error';
}

/** `callback` with what it throws handed to `onThrow` (which may rethrow), or undefined. */
export function guardedCallback<T>(
  callback: ((value: T) => void) | undefined,
  onThrow: (error: unknown) => void,
): ((value: T) => void) | undefined {
  if (callback === undefined) return undefined;
  return value => {
    try {
      callback(value);
    } catch (error) {
      onThrow(error);
    }
  };
}
