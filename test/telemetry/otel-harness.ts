// A real OpenTelemetry SDK set up as an app would (tracer and meter providers registered
// globally, AsyncLocalStorage context, W3C trace context and baggage propagation), exporting to memory,
// plus helpers to read the span tree. Uninstalled after the suite so other tests run as
// apps without telemetry do.
import { OpenTelemetry } from '@ai-sdk/otel';
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricReader,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';

export type FinishedSpan = ReturnType<InMemorySpanExporter['getFinishedSpans']>[number];

/** A span with its children, for reading a trace as a tree. */
export type SpanNode = { span: FinishedSpan; children: SpanNode[] };

export type OtelHarness = {
  /** The AI SDK's integration, to pass as `telemetry: { integrations: [aiSdk] }`. */
  aiSdk: OpenTelemetry;
  /** The SDK's tracer provider (also registered globally). */
  tracerProvider: TracerProvider;
  /** The SDK's meter provider (also registered globally). */
  meterProvider: MeterProvider;
  /** Every ended span, once their (asynchronous) export is done. */
  spans: () => Promise<FinishedSpan[]>;
  /** The metrics collected so far, by instrument name: every data point's value and attributes. */
  metrics: () => Promise<
    Map<string, Array<{ value: unknown; attributes: Record<string, unknown> }>>
  >;
  reset: () => void;
  uninstall: () => Promise<void>;
};

/**
 * Registers the SDK globally; `extraProcessors` receive the spans too and `extraReaders` the
 * metrics (e.g. OTLP exporters).
 */
export function installOtel({
  extraProcessors = [],
  extraReaders = [],
}: { extraProcessors?: SpanProcessor[]; extraReaders?: MetricReader[] } = {}): OtelHarness {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter }), ...extraProcessors],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  );
  trace.setGlobalTracerProvider(tracerProvider);
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 60_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader, ...extraReaders] });
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    aiSdk: new OpenTelemetry(),
    tracerProvider,
    meterProvider,
    spans: async () => {
      await tracerProvider.forceFlush();
      return exporter.getFinishedSpans();
    },
    metrics: async () => {
      await reader.forceFlush();
      const byName = new Map<
        string,
        Array<{ value: unknown; attributes: Record<string, unknown> }>
      >();
      const last = metricExporter.getMetrics().at(-1);
      for (const scope of last?.scopeMetrics ?? []) {
        for (const metric of scope.metrics) {
          byName.set(
            metric.descriptor.name,
            metric.dataPoints.map(point => ({
              value: point.value,
              attributes: point.attributes as Record<string, unknown>,
            })),
          );
        }
      }
      return byName;
    },
    reset: () => exporter.reset(),
    uninstall: async () => {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      metrics.disable();
      propagation.disable();
      contextManager.disable();
      context.disable();
    },
  };
}

/** The spans as trees (roots: spans whose parent is not among them). */
export function spanTree(spans: FinishedSpan[]): SpanNode[] {
  const nodes = new Map(spans.map(span => [span.spanContext().spanId, { span, children: [] }]));
  const roots: SpanNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.span.parentSpanContext?.spanId;
    const parentNode = parent === undefined ? undefined : nodes.get(parent);
    (parentNode?.children ?? roots).push(node as SpanNode);
  }
  const byStart = (a: SpanNode, b: SpanNode) =>
    hrMs(a.span.startTime) - hrMs(b.span.startTime) || a.span.name.localeCompare(b.span.name);
  const sort = (list: SpanNode[]) => {
    list.sort(byStart);
    for (const node of list) sort(node.children);
  };
  sort(roots);
  return roots;
}

/** The tree as indented lines of span names, for readable assertions and docs. */
export function renderTree(roots: SpanNode[], depth = 0): string[] {
  return roots.flatMap(node => [
    `${'  '.repeat(depth)}${node.span.name}`,
    ...renderTree(node.children, depth + 1),
  ]);
}

/** The names of the span's ancestors, nearest first. */
export function ancestors(span: FinishedSpan, spans: FinishedSpan[]): string[] {
  const byId = new Map(spans.map(s => [s.spanContext().spanId, s]));
  const names: string[] = [];
  for (
    let parent = byId.get(span.parentSpanContext?.spanId ?? '');
    parent !== undefined;
    parent = byId.get(parent.parentSpanContext?.spanId ?? '')
  ) {
    names.push(parent.name);
  }
  return names;
}

const hrMs = ([s, ns]: [number, number]) => s * 1000 + ns / 1e6;
