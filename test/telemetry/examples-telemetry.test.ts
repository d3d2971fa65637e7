// Both examples export traces when OTEL_EXPORTER_OTLP_ENDPOINT is set: their telemetry
// modules (registered as the apps register them, the AI SDK's integration included) deliver
// a turn to a collector process over OTLP/HTTP; and the Hono example, run as `npm start` runs
// it, exports its repaired chart turn (MCP, selection, two python attempts on the real
// sandbox) as one trace. Set TRACE_DUMP=file to keep that trace (docs/observability.md's
// picture is drawn from it by test/telemetry/render-trace.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { toolSelection } from 'ai-toolbelt';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type AppProcess, startAppProcess } from '../e2e/support/app-process.ts';
import { QUESTION, SELECTED_TOOL, weatherScenario } from '../e2e/support/weather-scenario.ts';
import { answerText, chatRequest, readUIChunks } from '../examples/ui-chunks.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai/fake-openai-server.ts';
import { scriptedModel } from '../helpers/scripted-model.ts';
import { describeSandbox } from '../sandbox/sandbox-availability.ts';

export type ReceivedSpan = {
  service: string;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
};

const root = join(import.meta.dirname, '..', '..');
let collector: ChildProcess;
let url: string;

beforeAll(async () => {
  const script = fileURLToPath(new URL('./fixtures/otlp-collector.ts', import.meta.url));
  collector = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: collector.stdout! }), 'line')) as [string];
  url = (JSON.parse(line) as { url: string }).url;
});
afterAll(async () => {
  if (collector !== undefined && collector.exitCode === null) {
    collector.stdin!.end();
    await once(collector, 'exit');
  }
});
// The modules register process-wide providers, as an app does once; each test starts clean.
afterEach(() => {
  for (const api of [trace, metrics, propagation, context]) api.disable();
  globalThis.AI_SDK_TELEMETRY_INTEGRATIONS = undefined;
});

const received = async (service: string): Promise<ReceivedSpan[]> => {
  const body = (await (await fetch(`${url}/received`)).json()) as { spans: ReceivedSpan[] };
  return body.spans.filter(span => span.service === service);
};

for (const [example, file] of [
  ['hono-server', 'examples/hono-server/src/telemetry.ts'],
  ['next-app', 'examples/next-app/lib/telemetry.ts'],
] as const) {
  it(`the ${example} example's telemetry exports the AI SDK's and ai-toolbelt's spans over OTLP`, async () => {
    const { startTelemetry } = (await import(join(root, file))) as {
      startTelemetry: typeof import('../../examples/hono-server/src/telemetry.ts').startTelemetry;
    };
    const service = `telemetry-test-${example}`;
    expect(await startTelemetry({ env: {}, serviceName: service })).toBeUndefined();
    const telemetry = await startTelemetry({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: url },
      serviceName: service,
    });
    expect(telemetry!.description).toBe(`OTLP/HTTP to ${url}`);
    const tools = Object.fromEntries(
      ['get_weather', 'send_email', 'create_ticket', 'python'].map(name => [
        name,
        tool({
          description: `${name.replace('_', ' ')} tool`,
          inputSchema: jsonSchema({ type: 'object' }),
          execute: async () => 'ok',
        }),
      ]),
    );
    const selection = toolSelection({ topK: 1 });
    const model = scriptedModel([
      { toolCalls: [{ name: 'get_weather', input: {} }] },
      { text: 'Sunny.' },
    ]);
    // No per-call telemetry option: the module registered the AI SDK's integration.
    await generateText({
      model: wrapLanguageModel({ model, middleware: selection.middleware }),
      tools,
      prompt: 'weather in Oslo',
      stopWhen: stepCountIs(3),
    });
    await telemetry!.shutdown();
    const spans = await received(service);
    const names = spans.map(span => span.name);
    expect(names).toEqual(
      expect.arrayContaining(['invoke_agent mock-model-id', 'execute_tool get_weather']),
    );
    const selected = spans.find(span => span.name === 'retrieval tool-index')!;
    expect(selected.attributes['ai_toolbelt.selection.tools']).toEqual(['get_weather']);
    expect(new Set(spans.map(span => span.traceId)).size).toBe(1);
  });
}

describeSandbox('the Hono example with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let fake: FakeOpenAI;
  let app: AppProcess;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ script: weatherScenario() });
    app = await startAppProcess({
      command: process.execPath,
      args: [join(root, 'examples/hono-server/src/main.ts')],
      env: {
        ...{ PORT: '0', OPENAI_API_KEY: 'test', OPENAI_BASE_URL: fake.baseURL },
        ...{ OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_SERVICE_NAME: 'hono-example-under-test' },
      },
      readyPattern: /Listening on (http:\/\/127\.0\.0\.1:\d+)/,
    });
  });
  afterAll(async () => {
    await app?.stop();
    await fake?.close();
  });

  it('exports the repaired chart turn as one trace: selection, MCP and sandbox under the AI SDK', async () => {
    expect(app.output()).toContain(`[telemetry] OTLP/HTTP to ${url}`);
    const response = await fetch(`${app.ready[1]}/api/chat`, chatRequest(QUESTION));
    expect(answerText(await readUIChunks(response))).toContain('Oslo');
    // SIGTERM: the app flushes what is buffered before it exits.
    await app.stop();
    expect(app.child.exitCode).toBe(0);

    const spans = await received('hono-example-under-test');
    if (process.env.TRACE_DUMP) await writeFile(process.env.TRACE_DUMP, JSON.stringify(spans));
    const agent = spans.find(span => span.name.startsWith('invoke_agent '))!;
    const turn = spans.filter(span => span.traceId === agent.traceId);
    const byId = new Map(turn.map(span => [span.spanId, span]));
    const chain = (span: ReceivedSpan): string[] => {
      const parent = span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId);
      return parent === undefined ? [] : [parent.name, ...chain(parent)];
    };
    const one = (name: string) => turn.filter(span => span.name === name);
    const selections = one('retrieval tool-index');
    expect(selections.length).toBeGreaterThanOrEqual(4);
    for (const selection of selections) {
      expect(chain(selection)[0]).toMatch(/^chat /);
      expect(chain(selection).at(-1)).toBe(agent.name);
    }
    expect(selections[0]!.attributes['ai_toolbelt.selection.tools']).toContain(SELECTED_TOOL);
    expect(selections[0]!.attributes['ai_toolbelt.selection.retrieval']).toBe('hybrid');
    const [call] = one(`tools/call ${SELECTED_TOOL}`);
    expect(chain(call!)[0]).toBe(`execute_tool ${SELECTED_TOOL}`);
    const attempts = one('ai_toolbelt.python.attempt');
    expect(attempts.map(span => span.attributes['ai_toolbelt.python.status'])).toEqual([
      'error',
      'success',
    ]);
    expect(attempts[0]!.attributes['ai_toolbelt.repair.decision']).toBe('repair');
    const runs = one('ai_toolbelt.sandbox.run');
    expect(runs.map(run => chain(run).slice(0, 2))).toEqual([
      ['ai_toolbelt.python.attempt', 'execute_tool python'],
      ['ai_toolbelt.python.attempt', 'execute_tool python'],
    ]);
    expect(runs[1]!.attributes['ai_toolbelt.sandbox.images']).toBe(1);
  });
});
