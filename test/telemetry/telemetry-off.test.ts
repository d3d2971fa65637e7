// Telemetry costs nothing when nobody listens: with no tracer or meter provider registered,
// a turn with selection, an MCP call and python runs creates no span, no tracer and no
// metric instrument; with a provider registered but `configureTelemetry({ enabled: false })`,
// it records nothing either. Bad settings are refused with a typed error.
import { fileURLToPath } from 'node:url';
import {
  ProxyTracer,
  ProxyTracerProvider,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.ts';
import { connectMcpServers, type McpToolbox } from '../../src/mcp/index.ts';
import { toolSelection } from '../../src/middleware/selection/tool-selection.ts';
import { pythonTool } from '../../src/python/python-tool.ts';
import type { DockerSandbox } from '../../src/sandbox/index.ts';
import { configureTelemetry } from '../../src/telemetry/configure-telemetry.ts';
import { hashingEmbeddingModel } from '../helpers/hashing-embedding-model.ts';
import { scriptedModel } from '../helpers/scripted-model.ts';
import { describeSandbox, suiteSandbox } from '../sandbox/sandbox-availability.ts';
import { installOtel } from './otel-harness.ts';

const server = fileURLToPath(new URL('./fixtures/traced-mcp-server.ts', import.meta.url));
let toolbox: McpToolbox;

beforeAll(async () => {
  toolbox = await connectMcpServers({
    servers: { sales: { command: process.execPath, args: [server] } },
    // Hybrid: the query embedding path runs too.
    embeddingModel: hashingEmbeddingModel(),
  });
});
afterAll(() => toolbox?.close());
afterEach(() => {
  configureTelemetry();
  vi.restoreAllMocks();
});

/** A turn: selection, an MCP call, a python call (on `sandbox`), an answer. */
async function turn(sandbox: Parameters<typeof pythonTool>[0]['sandbox']): Promise<string> {
  const selection = toolSelection({ index: toolbox.index, topK: 2, pinned: ['python'] });
  const model = scriptedModel([
    { toolCalls: [{ name: 'sales_by_region', input: { quarter: 'Q3' } }] },
    { toolCalls: [{ name: 'python', input: { code: 'print(1 / 0)' } }] },
    { text: 'done' },
  ]);
  const result = await generateText({
    model: wrapLanguageModel({ model, middleware: selection.middleware }),
    tools: { ...toolbox.tools, python: pythonTool({ sandbox }) },
    prompt: 'Q3 sales by region, divided by zero',
    stopWhen: stepCountIs(4),
  });
  return result.text;
}

/** Spies on every way the API could hand out a tracer or start a span without a provider. */
function spyOnTheApi() {
  return [
    vi.spyOn(ProxyTracerProvider.prototype, 'getTracer'),
    vi.spyOn(ProxyTracer.prototype, 'startSpan'),
    vi.spyOn(ProxyTracer.prototype, 'startActiveSpan'),
    vi.spyOn(trace, 'getTracer'),
  ];
}

/** A tracer provider that counts the spans it is asked for. */
function countingProvider(): { provider: TracerProvider; started: () => number } {
  let started = 0;
  const tracer = {
    startSpan: () => {
      started++;
      throw new Error('no span may be started');
    },
    startActiveSpan: () => {
      started++;
      throw new Error('no span may be started');
    },
  } as unknown as Tracer;
  return { provider: { getTracer: () => tracer }, started: () => started };
}

describeSandbox('telemetry off, on the real sandbox', () => {
  let sandbox: DockerSandbox;
  suiteSandbox({ warmPoolSize: 1, preimport: [] }, created => {
    sandbox = created;
  });

  it('creates no tracer, span or context when no provider is registered', async () => {
    const spies = spyOnTheApi();
    expect(await turn(sandbox)).toBe('done');
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it('records nothing with enabled: false, even with a provider registered', async () => {
    const otel = installOtel();
    try {
      configureTelemetry({ enabled: false });
      expect(await turn(sandbox)).toBe('done');
      expect(await otel.spans()).toEqual([]);
      expect([...(await otel.metrics()).keys()]).toEqual([]);
    } finally {
      await otel.uninstall();
    }
  });
});

it('creates no tracer or span without a provider (selection and MCP, no sandbox)', async () => {
  const spies = spyOnTheApi();
  const fakeSandbox = {
    execute: async () => ({
      ...{ status: 'success' as const, exitCode: 0, stdout: 'ok\n', stderr: '' },
      ...{ truncated: false, durationMs: 1, images: [], files: [], notes: [] },
    }),
  };
  expect(await turn(fakeSandbox)).toBe('done');
  for (const spy of spies) expect(spy).not.toHaveBeenCalled();
});

it('uses a provider given to configureTelemetry, and none when switched off', async () => {
  const counting = countingProvider();
  configureTelemetry({ tracerProvider: counting.provider, enabled: false });
  const fakeSandbox = {
    execute: async () => ({
      ...{ status: 'success' as const, exitCode: 0, stdout: 'ok\n', stderr: '' },
      ...{ truncated: false, durationMs: 1, images: [], files: [], notes: [] },
    }),
  };
  expect(await turn(fakeSandbox)).toBe('done');
  expect(counting.started()).toBe(0);

  const otel = installOtel();
  try {
    // A provider handed over directly wins over the global one.
    configureTelemetry({ tracerProvider: otel.tracerProvider });
    trace.disable();
    expect(await turn(fakeSandbox)).toBe('done');
    const names = (await otel.spans()).map(span => span.name);
    expect(names).toContain('retrieval tool-index');
    expect(names).toContain('ai_toolbelt.embed_query');
    expect(names).toContain('tools/call sales_by_region');
    expect(names).toContain('ai_toolbelt.python.attempt');
  } finally {
    await otel.uninstall();
  }
});

it('refuses settings that are not booleans or providers, naming the option', () => {
  const refused = (options: object) => {
    try {
      configureTelemetry(options as never);
    } catch (error) {
      return InvalidArgumentError.isInstance(error) ? error.argument : 'other error';
    }
    return 'accepted';
  };
  expect(refused({ recordInputs: 'yes' })).toBe('recordInputs');
  expect(refused({ enabled: 1 })).toBe('enabled');
  expect(refused({ tracerProvider: {} })).toBe('tracerProvider');
  expect(refused({ meterProvider: { getTracer() {} } })).toBe('meterProvider');
  expect(refused({})).toBe('accepted');
});
