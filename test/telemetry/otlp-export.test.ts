// A real OTLP/HTTP export: the app's spans and metrics go through OpenTelemetry's own OTLP
// exporters to a collector process (test/telemetry/fixtures/otlp-collector.ts, decoding
// OTLP/JSON), and the MCP server, instrumented, exports its span of the same call there too:
// the collector sees one trace across both processes.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectMcpServers, type McpToolbox } from '../../src/mcp/index.ts';
import { toolSelection } from '../../src/middleware/selection/tool-selection.ts';
import { scriptedModel } from '../helpers/scripted-model.ts';
import { type OtelHarness, installOtel } from './otel-harness.ts';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

type Received = {
  spans: Array<{
    service: string;
    scope: string;
    traceId: string;
    spanId: string;
    parentSpanId?: string;
    name: string;
    kind: number;
    attributes: Record<string, unknown>;
  }>;
  metrics: string[];
  requests: Array<{ path: string; contentType: string }>;
};

let collector: ChildProcess;
let url: string;
let otel: OtelHarness;
let toolbox: McpToolbox;

beforeAll(async () => {
  collector = spawn(process.execPath, [fixture('otlp-collector.ts')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: collector.stdout! }), 'line')) as [string];
  url = (JSON.parse(line) as { url: string }).url;
  otel = installOtel({
    extraProcessors: [
      new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${url}/v1/traces` }) }),
    ],
    extraReaders: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${url}/v1/metrics` }),
        exportIntervalMillis: 60_000,
      }),
    ],
  });
  toolbox = await connectMcpServers({
    servers: {
      sales: {
        command: process.execPath,
        args: [fixture('traced-mcp-server.ts')],
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: url },
      },
    },
  });
}, 30_000);

afterAll(async () => {
  await toolbox?.close();
  await otel?.uninstall();
  if (collector !== undefined && collector.exitCode === null) {
    collector.stdin!.end();
    await once(collector, 'exit');
  }
});

it('delivers the turn to a collector process over OTLP/HTTP, the MCP server joining the trace', async () => {
  const selection = toolSelection({ index: toolbox.index, topK: 2 });
  const model = scriptedModel([
    { toolCalls: [{ name: 'sales_by_region', input: { quarter: 'Q3' } }] },
    { text: 'North leads.' },
  ]);
  await generateText({
    model: wrapLanguageModel({ model, middleware: selection.middleware }),
    tools: toolbox.tools,
    prompt: 'Which region sold most in Q3?',
    stopWhen: stepCountIs(3),
    telemetry: { integrations: [otel.aiSdk] },
  });
  await otel.tracerProvider.forceFlush();
  await otel.meterProvider.forceFlush();
  const received = (await (await fetch(`${url}/received`)).json()) as Received;

  expect(received.requests.map(r => r.contentType)).toContain('application/json');
  const span = (name: string, service?: string) =>
    received.spans.find(s => s.name === name && (service === undefined || s.service === service));
  const root = span('invoke_agent mock-model-id')!;
  const selected = span('retrieval tool-index')!;
  const client = span('tools/call sales_by_region', root.service)!;
  expect(selected).toMatchObject({ scope: 'ai-toolbelt', traceId: root.traceId });
  expect(selected.attributes['ai_toolbelt.selection.tools']).toContain('sales_by_region');
  expect(client).toMatchObject({ scope: 'ai-toolbelt', kind: 3, traceId: root.traceId });
  expect(client.attributes).toMatchObject({ 'mcp.method.name': 'tools/call' });
  // The server's own span: same trace, its parent the client's span, from another process.
  const served = span('tools/call sales_by_region', 'traced-mcp-server')!;
  expect(served).toMatchObject({ kind: 2, traceId: client.traceId, parentSpanId: client.spanId });
  expect(received.metrics).toEqual(
    expect.arrayContaining(['ai_toolbelt.selection.duration', 'mcp.client.operation.duration']),
  );
});
