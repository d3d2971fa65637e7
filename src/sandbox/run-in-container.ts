import { type ArtifactCaps, createNonce, encodeRunInput, markerPrefix } from './bootstrap.ts';
import type { CleanupTracker } from './cleanup-tracker.ts';
import { dockerCall, isGone } from './docker-call.ts';
import { withDeadline } from '../util/with-deadline.ts';
import { OutputCollector } from './output-collector.ts';
import type { SandboxContainer } from './sandbox-container.ts';
import type { SandboxOutputChunk, SandboxResult, SandboxStatus } from './types.ts';

type Ending =
  | { kind: 'marker'; exitStatus: number }
  | { kind: 'ended' }
  | { kind: 'timeout' }
  | { kind: 'output-limit' }
  | { kind: 'abort'; reason: unknown };

/**
 * Runs `code` in a started container and removes the container afterwards (in the
 * background, through `cleanup`). Ends in one of these ways:
 * - the bootstrap's done markers arrive on both streams: the result is known without
 *   waiting ~70 ms for gVisor to tear down;
 * - the attach stream ends without markers: the container's real exit state decides
 *   (`OOMKilled` -> `oom`, a signal or gVisor's silent exit 2 -> `crashed`);
 * - the wall-clock limit, the output cap or an abort: the container is killed first
 *   (Docker's own wait timeout would not kill it), then the result is reported.
 */
export async function runInContainer({
  sandboxContainer,
  code,
  files = [],
  caps,
  timeoutMs,
  maxOutputBytes,
  dockerTimeoutMs,
  cleanup,
  abortSignal,
  onOutput,
}: {
  /** A started container, already taken from the pool. */
  sandboxContainer: SandboxContainer;
  /** Python source. */
  code: string;
  /** Input files, already checked (absolute paths under /tmp). */
  files?: ReadonlyArray<{ path: string; data: Uint8Array }>;
  /** What the run may return: images, files, bytes of both together. */
  caps: ArtifactCaps;
  /** Wall-clock limit of the run. */
  timeoutMs: number;
  /** Cap per output stream, in bytes. */
  maxOutputBytes: number;
  /** Deadline of each Docker call. */
  dockerTimeoutMs: number;
  /** Removes the container afterwards. */
  cleanup: CleanupTracker;
  /** Aborting kills the run; the promise rejects with the reason. */
  abortSignal?: AbortSignal;
  /** Streaming output callback. */
  onOutput?: (chunk: SandboxOutputChunk) => void;
}): Promise<SandboxResult> {
  const { container, socket } = sandboxContainer;
  const startedAt = performance.now();
  const nonce = createNonce();
  let settle: (ending: Ending) => void = () => {};
  const ending = new Promise<Ending>(resolve => (settle = resolve));
  let callbackError: { error: unknown } | undefined;
  const collector = new OutputCollector({
    marker: markerPrefix(nonce),
    maxBytes: maxOutputBytes,
    maxArtifactBytes: caps.bytes,
    onOutput:
      onOutput === undefined
        ? undefined
        : chunk => {
            try {
              onOutput(chunk);
            } catch (error) {
              callbackError ??= { error };
              settle({ kind: 'abort', reason: error });
            }
          },
    onLimit: () => settle({ kind: 'output-limit' }),
    onMarkers: exitStatus => settle({ kind: 'marker', exitStatus }),
  });
  const onEnd = () => settle({ kind: 'ended' });
  const onAbort = () => settle({ kind: 'abort', reason: abortSignal?.reason });
  const timer = setTimeout(() => settle({ kind: 'timeout' }), timeoutMs);
  abortSignal?.addEventListener('abort', onAbort, { once: true });
  try {
    sandboxContainer.take((stream, payload) => collector.push(stream, payload));
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    if (abortSignal?.aborted) onAbort();
    socket.on('error', onEnd);
    const input = encodeRunInput({ nonce, code, files, caps });
    for (const chunk of input.slice(0, -1)) socket.write(chunk);
    socket.end(input.at(-1));

    const first = await ending;
    let exitCode: number | null = null;
    let status: SandboxStatus;
    if (first.kind === 'marker') {
      exitCode = first.exitStatus;
      status = exitCode === 0 ? 'success' : 'error';
    } else if (first.kind === 'ended') {
      ({ exitCode, status } = await exitState({
        sandboxContainer,
        timeoutMs,
        startedAt,
        dockerTimeoutMs,
      }));
      if (status === 'crashed' && exitCode === 2) {
        // gVisor ends the whole sandbox on a fork bomb: exit 2 and nothing printed.
        const { stdout, stderr } = collector.result();
        if (stdout.length > 0 || stderr.length > 0) status = 'error';
      }
    } else {
      socket.destroy();
      await kill(sandboxContainer, dockerTimeoutMs);
      if (first.kind === 'abort') throw callbackError?.error ?? first.reason;
      status = first.kind;
    }
    collector.flush();
    const output = collector.result();
    return { status, exitCode, ...output, durationMs: Math.round(performance.now() - startedAt) };
  } finally {
    clearTimeout(timer);
    abortSignal?.removeEventListener('abort', onAbort);
    socket.destroy();
    cleanup.remove(container);
  }
}

/** After the output ended without markers: waits for the exit (killing at the deadline) and reads OOMKilled. */
async function exitState({
  sandboxContainer,
  timeoutMs,
  startedAt,
  dockerTimeoutMs,
}: {
  sandboxContainer: SandboxContainer;
  timeoutMs: number;
  startedAt: number;
  dockerTimeoutMs: number;
}): Promise<{ exitCode: number | null; status: SandboxStatus }> {
  const { container } = sandboxContainer;
  const remainingMs = Math.max(1, timeoutMs - (performance.now() - startedAt));
  const timedOut = new Error('run deadline');
  let first: { StatusCode: number };
  try {
    // The stream can end while the process lives on (it closed stdout and stderr).
    first = await withDeadline({
      timeoutMs: remainingMs,
      run: abortSignal => container.wait({ abortSignal }) as Promise<{ StatusCode: number }>,
      timeoutError: () => timedOut,
    });
  } catch (error) {
    if (error !== timedOut) throw error;
    await kill(sandboxContainer, dockerTimeoutMs);
    return { exitCode: null, status: 'timeout' };
  }
  const exitCode = first.StatusCode;
  if (exitCode === 0) return { exitCode, status: 'success' };
  const info = await dockerCall({
    operation: 'container inspect',
    timeoutMs: dockerTimeoutMs,
    call: abortSignal => container.inspect({ abortSignal }),
  });
  if (info.State.OOMKilled) return { exitCode, status: 'oom' };
  if (exitCode === 2 || exitCode >= 128) return { exitCode, status: 'crashed' };
  return { exitCode, status: 'error' };
}

/** SIGKILLs the container and returns once Docker confirms; "not running" counts as done. */
async function kill(sandboxContainer: SandboxContainer, dockerTimeoutMs: number): Promise<void> {
  try {
    await dockerCall({
      operation: 'container kill',
      timeoutMs: dockerTimeoutMs,
      call: abortSignal => sandboxContainer.container.kill({ signal: 'SIGKILL', abortSignal }),
    });
  } catch (error) {
    if (!isGone(error)) throw error;
  }
}
