import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';

/** Options of {@link configureTelemetry}. */
export type TelemetryOptions = {
  /**
   * Set to `false` to emit no span and no metric even when a provider is registered
   * (the default follows the registered providers: on when there is one, free when not).
   */
  enabled?: boolean;
  /**
   * Record inputs on spans: the retrieval query text (`gen_ai.retrieval.query.text`), the
   * python code of each attempt and MCP tool arguments. Off by default: they may hold what
   * users typed, data and secrets pasted into a chat. Mirrors the AI SDK's `recordInputs`,
   * which ai-toolbelt cannot read from its middleware.
   */
  recordInputs?: boolean;
  /** Where spans go; the globally registered provider (`trace.setGlobalTracerProvider`) when omitted. */
  tracerProvider?: TracerProvider;
  /** Where metrics go; the globally registered provider (`metrics.setGlobalMeterProvider`) when omitted. */
  meterProvider?: MeterProvider;
};

/** The settings in force (module state: OpenTelemetry's own providers are process-wide too). */
export type TelemetrySettings = Readonly<{
  enabled: boolean;
  recordInputs: boolean;
  tracerProvider: TracerProvider | undefined;
  meterProvider: MeterProvider | undefined;
}>;

let settings: TelemetrySettings = {
  enabled: true,
  recordInputs: false,
  tracerProvider: undefined,
  meterProvider: undefined,
};

/**
 * Tunes ai-toolbelt's OpenTelemetry spans and metrics. Nothing needs calling for them to work:
 * with a tracer or meter provider registered (as the AI SDK's `@ai-sdk/otel` setup does),
 * selection, MCP requests, sandbox runs and repair attempts appear under the AI SDK's spans;
 * without one, nothing is created. Call it to record inputs (off by default), to use providers
 * that are not registered globally, or to switch the library's telemetry off. Each call
 * replaces the previous settings; `configureTelemetry()` restores the defaults.
 *
 * @example
 * ```ts
 * import { configureTelemetry } from 'ai-toolbelt';
 * configureTelemetry({ recordInputs: process.env.NODE_ENV !== 'production' });
 * ```
 */
export function configureTelemetry({
  enabled = true,
  recordInputs = false,
  tracerProvider,
  meterProvider,
}: TelemetryOptions = {}): void {
  for (const [argument, value] of [
    ['enabled', enabled],
    ['recordInputs', recordInputs],
  ] as const) {
    if (typeof value !== 'boolean') {
      throw new InvalidArgumentError({ argument, value, message: 'expected true or false' });
    }
  }
  for (const [argument, value, method] of [
    ['tracerProvider', tracerProvider, 'getTracer'],
    ['meterProvider', meterProvider, 'getMeter'],
  ] as const) {
    if (
      value !== undefined &&
      typeof (value as unknown as Record<string, unknown>)[method] !== 'function'
    ) {
      throw new InvalidArgumentError({
        argument,
        value,
        message: `expected an OpenTelemetry provider with ${method}(), e.g. from @opentelemetry/sdk-trace or @opentelemetry/sdk-metrics`,
      });
    }
  }
  settings = { enabled, recordInputs, tracerProvider, meterProvider };
}

/** The settings in force. */
export function telemetrySettings(): TelemetrySettings {
  return settings;
}
