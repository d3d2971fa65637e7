import type { Attributes, Span } from '@opentelemetry/api';
import { ATTR, SPAN } from './attributes.ts';
import { type Instruments, instruments } from './instruments.ts';
import { activeTracer, inSpan } from './tracer.ts';

/** Where a run or cell was placed, as the sandbox reports it to its span. */
export type RunPlacement = {
  /** The Docker engine's name. */
  engine: string;
  /** Time waiting for a run slot (every healthy engine was full). */
  queueMs?: number;
  /** Time until the run had a started container (about 0 from the warm pool). */
  startMs?: number;
  /** True when the container came from the warm pool, pre-started. */
  warm?: boolean;
  /** Cells: the conversation's interpreter was `live` already, or `started` for this cell. */
  interpreter?: 'live' | 'started';
};

/** What the sandbox tells the span of a run while it places it (undefined when nobody listens). */
export type RunTrace = { placed: (placement: RunPlacement) => void };

/** What a run returns (the shape of `SandboxResult` / `SandboxCellResult`). */
type RunResultLike = {
  status: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  durationMs: number;
  images: ReadonlyArray<{ data: Uint8Array }>;
  files: ReadonlyArray<{ data: Uint8Array }>;
  /** A cell's shown values. */
  results?: readonly unknown[];
  /** A cell interrupted at its timeout, its interpreter kept. */
  interrupted?: boolean;
  /** A cell that ended its interpreter. */
  ended?: string;
  cell?: number;
  /** Network use, with an egress policy. */
  network?: {
    connections: number;
    bytesSent: number;
    bytesReceived: number;
    refused: ReadonlyArray<{ host: string; port: number; reason: string }>;
    refusedCount: number;
  };
  restored?: {
    reason: string;
    cells: number;
    failed: readonly unknown[];
    ms: number;
  };
};

/**
 * Runs one sandbox execution (`run`) or conversation cell (`cell`) inside an
 * `ai_toolbelt.sandbox.run` / `ai_toolbelt.sandbox.cell` span: engine, queue wait, warm pool
 * hit or container start, run time, status, exit code, output and artifact sizes, and for
 * cells the cell number and how a lost interpreter was restored. Records the run-duration,
 * queue, warm-pool and busy-rejection metrics. The code itself is never recorded here (the
 * python tool's attempt span has it with `recordInputs`). Without a tracer or meter, `run`
 * runs alone with no trace.
 *
 * @example
 * ```ts
 * const result = await traceSandboxRun({ kind: 'run', timeoutMs, inputFiles: files.length, run: trace => runOnFleet({ ..., trace }) });
 * ```
 */
export async function traceSandboxRun<T extends RunResultLike>({
  kind,
  timeoutMs,
  inputFiles,
  run,
}: {
  /** A one-shot run or a conversation cell. */
  kind: 'run' | 'cell';
  /** The run's wall-clock limit. */
  timeoutMs: number;
  /** Files placed under /tmp before the run. */
  inputFiles: number;
  /** The run; it reports its placement through the trace. */
  run: (trace: RunTrace | undefined) => Promise<T>;
}): Promise<T> {
  const tracer = activeTracer();
  const meter = instruments();
  if (tracer === undefined && meter === undefined) return run(undefined);
  const started = performance.now();
  let status = 'exception';
  // A run placed again (its engine failed before the code was sent) counts its placements.
  let placements = 0;
  const traced = async (span: Span | undefined): Promise<T> => {
    const result = await run({
      placed: placement => placed({ placement, attempt: ++placements, span, meter }),
    });
    status = result.status;
    if (span?.isRecording()) span.setAttributes(resultAttributes(result));
    if (result.network !== undefined) recordEgress({ network: result.network, span, meter });
    return result;
  };
  try {
    if (tracer === undefined) return await traced(undefined);
    return await inSpan({
      tracer,
      name: kind === 'run' ? SPAN.sandboxRun : SPAN.sandboxCell,
      attributes: { [ATTR.sandboxTimeoutMs]: timeoutMs, [ATTR.sandboxInputFiles]: inputFiles },
      run: traced,
    });
  } catch (error) {
    const resource = busyResource(error);
    if (resource !== undefined) {
      meter?.sandboxBusyRejections.add(1, { [ATTR.sandboxResource]: resource });
    }
    throw error;
  } finally {
    meter?.sandboxRunDuration.record((performance.now() - started) / 1000, {
      [ATTR.sandboxStatus]: status,
      kind,
    });
  }
}

/** Refused connections: a span event each (host, port, reason) and the refusals counter. */
function recordEgress({
  network,
  span,
  meter,
}: {
  network: NonNullable<RunResultLike['network']>;
  span: Span | undefined;
  meter: Instruments | undefined;
}): void {
  for (const { host, port, reason } of network.refused) {
    meter?.sandboxEgressRefusals.add(1, { [ATTR.egressReason]: reason });
    span?.addEvent(ATTR.egressRefused, {
      [ATTR.egressHost]: host,
      [ATTR.egressPort]: port,
      [ATTR.egressReason]: reason,
    });
  }
  if (span?.isRecording()) {
    span.setAttributes({
      [ATTR.egressConnections]: network.connections,
      [ATTR.egressBytesSent]: network.bytesSent,
      [ATTR.egressBytesReceived]: network.bytesReceived,
      [ATTR.egressRefused]: network.refusedCount,
    });
  }
}

function placed({
  placement: { engine, queueMs, startMs, warm, interpreter },
  attempt,
  span,
  meter,
}: {
  placement: RunPlacement;
  attempt: number;
  span: Span | undefined;
  meter: Instruments | undefined;
}): void {
  if (meter !== undefined) {
    if (warm !== undefined) meter.sandboxWarmPool.add(1, { [ATTR.sandboxWarm]: warm });
    if (queueMs !== undefined) meter.sandboxQueueDuration.record(queueMs / 1000);
  }
  if (span === undefined) return;
  span.setAttributes({
    [ATTR.sandboxEngine]: engine,
    [ATTR.sandboxPlacements]: attempt,
    ...(queueMs === undefined ? {} : { [ATTR.sandboxQueueMs]: round(queueMs) }),
    ...(startMs === undefined ? {} : { [ATTR.sandboxStartMs]: round(startMs) }),
    ...(warm === undefined ? {} : { [ATTR.sandboxWarm]: warm }),
    ...(interpreter === undefined ? {} : { [ATTR.cellInterpreter]: interpreter }),
  });
}

function resultAttributes(result: RunResultLike): Attributes {
  const artifacts = [...result.images, ...result.files];
  const { restored } = result;
  return {
    [ATTR.sandboxStatus]: result.status,
    [ATTR.sandboxRunMs]: result.durationMs,
    [ATTR.sandboxStdoutBytes]: utf8Length(result.stdout),
    [ATTR.sandboxStderrBytes]: utf8Length(result.stderr),
    [ATTR.sandboxTruncated]: result.truncated,
    [ATTR.sandboxImages]: result.images.length,
    [ATTR.sandboxFiles]: result.files.length,
    [ATTR.sandboxArtifactBytes]: artifacts.reduce((sum, item) => sum + item.data.byteLength, 0),
    ...(result.exitCode === null ? {} : { [ATTR.sandboxExitCode]: result.exitCode }),
    ...(result.cell === undefined ? {} : { [ATTR.cellNumber]: result.cell }),
    ...(result.cell === undefined ? {} : { [ATTR.cellRestored]: restored !== undefined }),
    ...(result.cell === undefined
      ? {}
      : {
          [ATTR.cellResults]: result.results?.length ?? 0,
          [ATTR.cellInterrupted]: result.interrupted === true,
          [ATTR.cellEnded]: result.ended !== undefined,
        }),
    ...(restored === undefined
      ? {}
      : {
          [ATTR.cellRestoreReason]: restored.reason,
          [ATTR.cellRestoreMs]: restored.ms,
          [ATTR.cellReplayed]: restored.cells,
          [ATTR.cellReplayFailed]: restored.failed.length,
        }),
  };
}

function busyResource(error: unknown): string | undefined {
  const { name, resource } = (error ?? {}) as { name?: unknown; resource?: unknown };
  return name === 'ToolbeltSandboxBusyError' && typeof resource === 'string' ? resource : undefined;
}

/**
 * Counts work refused because a sandbox bound was reached, outside a traced run (sessions).
 *
 * @example
 * ```ts
 * recordBusyRejection('sessions');
 * ```
 */
export function recordBusyRejection(resource: string): void {
  instruments()?.sandboxBusyRejections.add(1, { [ATTR.sandboxResource]: resource });
}

/**
 * Tracks a caller waiting for a run slot in `ai_toolbelt.sandbox.queue.depth`.
 *
 * @example
 * ```ts
 * return queued(this.waiters.wait(abortSignal));
 * ```
 */
export function queued<T>(wait: Promise<T>): Promise<T> {
  const meter = instruments();
  if (meter === undefined) return wait;
  meter.sandboxQueueDepth.add(1);
  return wait.finally(() => meter.sandboxQueueDepth.add(-1));
}

/**
 * Counts an engine going up or down (`ai_toolbelt.sandbox.engine.state_changes`).
 *
 * @example
 * ```ts
 * recordEngineState({ engine: engine.name, state: engine.state });
 * ```
 */
export function recordEngineState({ engine, state }: { engine: string; state: string }): void {
  instruments()?.sandboxEngineStateChanges.add(1, {
    [ATTR.sandboxEngine]: engine,
    [ATTR.sandboxEngineState]: state,
  });
}

/** UTF-8 length of a string without encoding it (outputs run to megabytes). */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 2; // a surrogate pair: 2 UTF-16 units, 4 bytes
      i++;
    } else if (code >= 0x800) bytes += 2;
    else if (code >= 0x80) bytes += 1;
  }
  return bytes;
}

const round = (x: number) => Math.round(x * 1000) / 1000;
