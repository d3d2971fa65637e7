import {
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  type UpDownCounter,
  createNoopMeter,
  metrics,
} from '@opentelemetry/api';
import { METRIC } from './attributes.ts';
import { telemetrySettings } from './configure-telemetry.ts';
import { SCOPE } from './tracer.ts';

/** The library's metric instruments. */
export type Instruments = {
  selectionDuration: Histogram;
  mcpOperationDuration: Histogram;
  mcpReconnects: Counter;
  sandboxRunDuration: Histogram;
  sandboxQueueDepth: UpDownCounter;
  sandboxQueueDuration: Histogram;
  sandboxBusyRejections: Counter;
  sandboxEngineStateChanges: Counter;
  sandboxWarmPool: Counter;
  sandboxEgressRefusals: Counter;
  repairOutcomes: Counter;
};

// The API's no-op meter hands out shared singleton instruments: getting one of those back
// from a provider means nobody collects, so nothing is recorded.
const NOOP_HISTOGRAM = createNoopMeter().createHistogram('noop');
const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

let cached: { provider: MeterProvider; instruments: Instruments | undefined } | undefined;

/**
 * The instruments to record with, or undefined when no meter provider is registered (or
 * telemetry is off): then callers record nothing and build no attribute objects. Made once
 * per provider.
 *
 * @example
 * ```ts
 * instruments()?.sandboxBusyRejections.add(1, { [ATTR.sandboxResource]: 'runs' });
 * ```
 */
export function instruments(): Instruments | undefined {
  const { enabled, meterProvider } = telemetrySettings();
  if (!enabled) return undefined;
  const provider = meterProvider ?? metrics.getMeterProvider();
  if (cached?.provider === provider) return cached.instruments;
  const meter = provider.getMeter(SCOPE.name, SCOPE.version);
  const selectionDuration = seconds(
    meter,
    METRIC.selectionDuration,
    'Time to select the tools of one model call, query embedding included.',
  );
  cached = {
    provider,
    instruments:
      selectionDuration === NOOP_HISTOGRAM ? undefined : create(meter, selectionDuration),
  };
  return cached.instruments;
}

function create(meter: Meter, selectionDuration: Histogram): Instruments {
  return {
    selectionDuration,
    mcpOperationDuration: seconds(
      meter,
      METRIC.mcpOperationDuration,
      'MCP request duration as seen by the client, until the response arrives.',
    ),
    mcpReconnects: meter.createCounter(METRIC.mcpReconnects, {
      description: 'MCP reconnect attempts after a server was lost, and reconnects given up.',
    }),
    sandboxRunDuration: seconds(
      meter,
      METRIC.sandboxRunDuration,
      'Sandbox runs and cells, from the request to the result (queueing and start included).',
    ),
    sandboxQueueDepth: meter.createUpDownCounter(METRIC.sandboxQueueDepth, {
      description: 'Runs waiting for a sandbox slot (every healthy engine is full).',
    }),
    sandboxQueueDuration: seconds(
      meter,
      METRIC.sandboxQueueDuration,
      'Time a run waited for a sandbox slot.',
    ),
    sandboxBusyRejections: meter.createCounter(METRIC.sandboxBusyRejections, {
      description: 'Work the sandbox refused because a bound was reached (SandboxBusyError).',
    }),
    sandboxEngineStateChanges: meter.createCounter(METRIC.sandboxEngineStateChanges, {
      description: 'Docker engines going up or down.',
    }),
    sandboxWarmPool: meter.createCounter(METRIC.sandboxWarmPool, {
      description:
        'Containers taken for runs; ai_toolbelt.sandbox.warm tells pool hits from misses.',
    }),
    sandboxEgressRefusals: meter.createCounter(METRIC.sandboxEgressRefusals, {
      description:
        'Connections the egress proxy refused or cut, by ai_toolbelt.sandbox.egress.reason.',
    }),
    repairOutcomes: meter.createCounter(METRIC.repairOutcomes, {
      description:
        'Repair decisions on failed python runs, and runs that succeeded after a repair.',
    }),
  };
}

function seconds(meter: Meter, name: string, description: string): Histogram {
  return meter.createHistogram(name, {
    description,
    unit: 's',
    advice: { explicitBucketBoundaries: SECONDS },
  });
}
