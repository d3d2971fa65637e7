import type { Engine } from './engine.ts';
import type { EngineSet } from './engine-set.ts';
import { type RunRequest, guardedCallback, runInContainer } from '../run/run-in-container.ts';
import type { SandboxContainer } from '../run/sandbox-container.ts';
import type { SandboxResult } from '../types.ts';
import type { RunTrace } from '../../telemetry/sandbox-telemetry.ts';
import { withNetworkUsage } from '../egress/network-usage.ts';

/**
 * Runs `code` once somewhere in the fleet. Until the code reaches a container, a failure
 * (the engine went down, a warm container turned out dead, a start failed) places it again,
 * preferring other engines, at most once per engine plus one. Once the code has been sent,
 * it is never sent again: if the engine is lost then, the run rejects at once with
 * `SandboxUnavailableError` (`engine-lost`) naming the engine.
 *
 * @example
 * ```ts
 * const result = await runOnFleet({ engines, code: 'print(1)', files: [], caps, timeoutMs: 5_000, maxOutputBytes: 1 << 20, abortSignal });
 * ```
 */
export async function runOnFleet({
  engines,
  abortSignal,
  trace,
  ...request
}: RunRequest & {
  /** Where to place the run. */
  engines: EngineSet;
  /** Hears where the run was placed (telemetry); undefined when nobody listens. */
  trace?: RunTrace | undefined;
}): Promise<SandboxResult> {
  const tried = new Set<Engine>();
  const maxAttempts = engines.engines.length + 1;
  for (let attempt = 1; ; attempt++) {
    const asked = trace && performance.now();
    const engine = await engines.acquire(abortSignal, tried);
    const slotted = trace && performance.now();
    let container: SandboxContainer;
    try {
      const requested = trace && Date.now();
      container = await engine.takeContainer(abortSignal);
      // A container started before it was asked for came from the warm pool.
      trace?.placed({
        ...{
          engine: engine.name,
          queueMs: slotted! - asked!,
          warm: container.startedAt <= requested!,
        },
        startMs: performance.now() - slotted!,
      });
    } catch (error) {
      engines.release(engine);
      abortSignal.throwIfAborted();
      const typed = engine.toError(error);
      tried.add(engine);
      if (attempt >= maxAttempts) throw typed;
      // Let the probe take a dead engine out first, so the next placement goes elsewhere
      // (or waits for a slot there) instead of failing on the same engine again.
      if (engine.driver.isTransportError(error) && engine.state === 'up') await engine.probe();
      continue;
    }
    // The slot is held until the container is confirmed gone, so `maxConcurrentExecutions`
    // bounds live containers, not just results in flight (a run that lied about being done
    // still holds its slot). An engine lost mid-run gives its slot back at once.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      engines.release(engine);
    };
    let removal: Promise<void> | undefined;
    try {
      const result = await runPlaced({
        ...{ ...request, engine, container, abortSignal },
        onRemoval: (gone: Promise<void>) => void (removal = gone),
      });
      engine.runs++;
      return result;
    } finally {
      if (removal === undefined || engine.state !== 'up') release();
      else void removal.then(release);
    }
  }
}

/** Runs the code in a container taken from `engine`; settles at once if the engine is lost. */
async function runPlaced({
  engine,
  container,
  abortSignal,
  onOutput,
  onRemoval,
  ...request
}: RunRequest & {
  engine: Engine;
  container: SandboxContainer;
  onRemoval: (removal: Promise<void>) => void;
}): Promise<SandboxResult> {
  const controller = new AbortController();
  let unwatch = () => {};
  const lost = new Promise<never>((_, reject) => {
    unwatch = engine.onLost(error => {
      controller.abort(error);
      reject(error);
    });
  });
  const network = engine.egress?.usage(container.id);
  // The caller's own exception from onOutput ends the run and is rethrown as it is.
  let callbackError: { error: unknown } | undefined;
  const running = runInContainer({
    ...request,
    sandboxContainer: container,
    driver: engine.driver,
    cleanup: engine.cleanup,
    onRemoval,
    abortSignal: AbortSignal.any([abortSignal, controller.signal]),
    onOutput: guardedCallback(onOutput, error => {
      callbackError ??= { error };
      throw error;
    }),
  });
  running.catch(() => {});
  lost.catch(() => {});
  try {
    return withNetworkUsage(await Promise.race([running, lost]), network);
  } catch (error) {
    abortSignal.throwIfAborted();
    if (controller.signal.aborted) throw controller.signal.reason;
    if (callbackError !== undefined && error === callbackError.error) throw error;
    throw engine.toError(error, { inFlight: true });
  } finally {
    unwatch();
  }
}
