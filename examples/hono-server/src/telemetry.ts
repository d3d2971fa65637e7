// OpenTelemetry for the example, on when OTEL_EXPORTER_OTLP_ENDPOINT is set (e.g.
// http://127.0.0.1:4318 for a local collector, Jaeger or Langfuse's OTLP endpoint): traces
// and metrics go out over OTLP/HTTP. The AI SDK's integration (`@ai-sdk/otel`) emits a span
// per call, step and tool; ai-toolbelt's spans (selection, MCP requests, sandbox runs, repair
// attempts) nest under them because they share the registered providers. Without the
// variable nothing here is even imported.
//
// A copy of examples/next-app/lib/telemetry.ts on purpose: registering OpenTelemetry providers
// is the app's call (the library only uses the API), and each example stands alone.
import { configureTelemetry } from 'ai-toolbelt';

/** The running telemetry: what it sends where, and how to flush it on exit. */
export type Telemetry = { description: string; shutdown: () => Promise<void> };

/**
 * Registers OpenTelemetry providers exporting over OTLP/HTTP (the standard OTEL_* variables
 * configure the exporters), and the AI SDK's integration. Undefined when
 * OTEL_EXPORTER_OTLP_ENDPOINT is not set.
 *
 * @example
 * ```ts
 * const telemetry = await startTelemetry({ env: process.env, serviceName: 'ai-toolbelt-hono-example' });
 * ```
 */
export async function startTelemetry({
  env,
  serviceName,
}: {
  /** The environment (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, OTEL_RECORD_INPUTS). */
  env: Record<string, string | undefined>;
  /** Used when OTEL_SERVICE_NAME is not set. */
  serviceName: string;
}): Promise<Telemetry | undefined> {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return undefined;
  const [api, { AsyncLocalStorageContextManager }, core, traces, metrics, otlp, aiSdk] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/sdk-metrics'),
      Promise.all([
        import('@opentelemetry/exporter-trace-otlp-http'),
        import('@opentelemetry/exporter-metrics-otlp-http'),
        import('@opentelemetry/resources'),
      ]),
      Promise.all([import('@ai-sdk/otel'), import('ai')]),
    ]);
  const [{ OTLPTraceExporter }, { OTLPMetricExporter }, { resourceFromAttributes }] = otlp;
  const [{ OpenTelemetry }, { registerTelemetry }] = aiSdk;
  const resource = resourceFromAttributes({
    'service.name': env.OTEL_SERVICE_NAME || serviceName,
  });
  // The OTLP/HTTP paths under the endpoint, unless a signal has its own (the exporters read
  // OTEL_EXPORTER_OTLP_HEADERS and the other OTEL_EXPORTER_OTLP_* settings themselves).
  const base = endpoint.endsWith('/') ? endpoint : `${endpoint}/`;
  const traceUrl = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || `${base}v1/traces`;
  const metricUrl = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT || `${base}v1/metrics`;
  const tracerProvider = new traces.TracerProvider({
    resource,
    spanProcessors: [
      new traces.BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: traceUrl }) }),
    ],
  });
  const meterProvider = new metrics.MeterProvider({
    resource,
    readers: [
      new metrics.PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: metricUrl }),
        exportIntervalMillis: 15_000,
      }),
    ],
  });
  // Parent/child links across awaits, and W3C trace context (also what MCP servers get in _meta).
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(
    new core.CompositePropagator({
      propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
    }),
  );
  api.trace.setGlobalTracerProvider(tracerProvider);
  api.metrics.setGlobalMeterProvider(meterProvider);
  registerTelemetry(new OpenTelemetry());
  // Queries and code on spans only when asked: they hold what users typed.
  const recordInputs = env.OTEL_RECORD_INPUTS === 'true';
  configureTelemetry({ recordInputs });
  return {
    description: `OTLP/HTTP to ${endpoint}${recordInputs ? ', inputs recorded' : ''}`,
    shutdown: async () => {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
