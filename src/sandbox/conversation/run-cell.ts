import { createNonce } from '../in-container/bootstrap.ts';
import type { EngineDriver } from '../driver/engine-driver.ts';
import { guardedCallback } from '../run/run-in-container.ts';
import type {
  SandboxDisplayResult,
  SandboxOutputChunk,
  SandboxResult,
  SandboxStatus,
} from '../types.ts';
import { CellCollector } from './cell-collector.ts';
import { type CellRequest, CellFrameParser, encodeCell } from './cell-protocol.ts';

/** A cell's outcome, and whether its interpreter is gone (killed, crashed, out of memory). */
export type CellRun = SandboxResult & {
  ended: boolean;
  /** Values the cell showed. */
  results: SandboxDisplayResult[];
  /** Timed out, interrupted, and the interpreter lives on. */
  interrupted: boolean;
};

/**
 * How long after a cell's deadline the host waits for the supervisor's answer: its interrupt
 * grace (2 s, interpreter_supervisor.py) for the cell to end on its KeyboardInterrupt, then the
 * kill, plus a margin. Past it the host kills the container itself.
 */
const INTERRUPT_WAIT_MS = 3_500;

type Ending =
  | {
      kind: 'done';
      exitCode?: number;
      status?: 'timeout' | 'output-limit' | 'crashed';
      interrupted?: boolean;
    }
  | { kind: 'ended' }
  | { kind: 'stop'; status: 'timeout' | 'output-limit' | 'crashed'; note?: string }
  | { kind: 'abort'; reason: unknown };

/**
 * Runs one cell in a live interpreter: attaches to its container, sends the request, streams
 * the cell's output to `onOutput` and collects its images, files, shown values and notes, each
 * checked against the caps here on the host (the kernel runs the model's code: what it sends is
 * not trusted). At the deadline the supervisor interrupts the cell (it ends `timeout`,
 * `interrupted`, the interpreter kept) or kills it; past a cap, on a broken protocol, an abort,
 * or when the supervisor does not answer in time, the container is killed (the conversation is
 * restored in a new one later); the cell then ends `output-limit`, `timeout` or `crashed`
 * (abort rejects with the signal's reason once the container is dead).
 *
 * @example
 * ```ts
 * const run = await runCell({ driver, id, secret, request });
 * if (run.ended) forgetInterpreter();
 * ```
 */
export async function runCell({
  driver,
  id,
  secret,
  request,
  abortSignal,
  onOutput,
  onResult,
}: {
  /** The interpreter's engine. */
  driver: EngineDriver;
  /** The interpreter's box. */
  id: string;
  /** The interpreter's secret. */
  secret: string;
  /** The cell. */
  request: CellRequest;
  /** Aborting kills the interpreter; the promise rejects with the reason (as when `onOutput` throws). */
  abortSignal?: AbortSignal | undefined;
  /** Output as it arrives. */
  onOutput?: ((chunk: SandboxOutputChunk) => void) | undefined;
  /** Shown values as they arrive. */
  onResult?: ((result: SandboxDisplayResult) => void) | undefined;
}): Promise<CellRun> {
  abortSignal?.throwIfAborted();
  const startedAt = performance.now();
  const stream = await driver.attach(id);
  const requestId = createNonce();
  let finish: (ending: Ending) => void = () => {};
  const ending = new Promise<Ending>(resolve => (finish = resolve));
  // What the caller's callback throws ends the cell (the interpreter is killed) and is rethrown.
  const abort = (error: unknown) => finish({ kind: 'abort', reason: error });
  const collected = new CellCollector({
    request,
    onOutput: guardedCallback(onOutput, abort),
    onResult: guardedCallback(onResult, abort),
  });
  const parser = new CellFrameParser({
    requestId,
    joinMidStream: true,
    allowRecord: bytes => collected.allowRecord(bytes),
    onFrame: frame => {
      if (!collected.take(frame)) finish({ kind: 'stop', status: 'output-limit' });
      else if (frame.type === 'done') finish({ kind: 'done', ...frame.outcome });
    },
  });
  const onPayload = (which: 'stdout' | 'stderr', payload: Buffer) => {
    // The supervisor writes only frames to stdout; its stderr is for its own failures.
    if (which === 'stdout' && !parser.push(payload)) {
      const overCap = parser.error === 'a record over the limits';
      finish(
        overCap
          ? { kind: 'stop', status: 'output-limit' }
          : {
              kind: 'stop',
              status: 'crashed',
              note: `the interpreter broke its protocol (${parser.error})`,
            },
      );
    }
  };
  const onEnd = () => finish({ kind: 'ended' });
  const onAbort = () => finish({ kind: 'abort', reason: abortSignal?.reason });
  const timer = setTimeout(
    () => finish({ kind: 'stop', status: 'timeout' }),
    request.timeoutMs + INTERRUPT_WAIT_MS,
  );
  try {
    stream.onOutput(onPayload);
    stream.onEnd(onEnd);
    abortSignal?.addEventListener('abort', onAbort, { once: true });
    if (abortSignal?.aborted) onAbort();
    for (const chunk of encodeCell({ secret, requestId, request })) stream.write(chunk);
    const end = await ending;
    let status: SandboxStatus;
    let exitCode: number | null = null;
    let ended = true;
    let interrupted = false;
    if (end.kind === 'done') {
      status = end.status ?? (end.exitCode === 0 ? 'success' : 'error');
      exitCode = end.exitCode ?? null;
      interrupted = end.interrupted === true;
      ended = end.status !== undefined && !interrupted;
      // The supervisor stopped the kernel and is exiting: the container must be gone before
      // the next cell looks for it (else it may still seem to run, and that cell fail).
      if (ended) await driver.kill(id);
    } else if (end.kind === 'ended') {
      ({ status, exitCode } = await lostDuringCell(driver, id));
    } else {
      stream.destroy();
      await driver.kill(id);
      if (end.kind === 'abort') throw end.reason;
      status = end.status;
      if (end.note !== undefined) collected.notes.push(end.note);
    }
    const output = collected.result();
    return {
      ...output,
      // The supervisor may stop a cell before the bytes over the cap reach the host.
      truncated: output.truncated || status === 'output-limit',
      status,
      exitCode,
      durationMs: Math.round(performance.now() - startedAt),
      ended,
      interrupted,
    };
  } finally {
    clearTimeout(timer);
    abortSignal?.removeEventListener('abort', onAbort);
    stream.destroy();
  }
}

/** The status of a cell whose interpreter went away mid-cell, from the engine's record of the exit. */
async function lostDuringCell(
  driver: EngineDriver,
  id: string,
): Promise<{ status: SandboxStatus; exitCode: number | null }> {
  const state = await driver.state(id, { settle: true });
  if (state === undefined) return { status: 'crashed', exitCode: null };
  if (state.oomKilled) return { status: 'oom', exitCode: state.exitCode };
  if (state.running) await driver.kill(id);
  return { status: 'crashed', exitCode: state.running ? null : state.exitCode };
}
