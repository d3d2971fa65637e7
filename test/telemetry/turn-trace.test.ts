// One chat turn as an operator sees it in a trace: streamText with the AI SDK's own
// OpenTelemetry integration, tool selection over a real MCP server (stdio child process), an
// MCP call, and a python chart that fails and is repaired on the real sandbox (Docker +
// gVisor). Spans go to a real OpenTelemetry SDK exporting to memory; only the model is scripted.
import { fileURLToPath } from 'node:url';
import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { connectMcpServers, type McpToolbox } from '../../src/mcp/index.ts';
import { repairGuardMiddleware } from '../../src/middleware/repair-guard-middleware.ts';
import { toolSelection } from '../../src/middleware/selection/tool-selection.ts';
import { pythonTool } from '../../src/python/python-tool.ts';
import type { DockerSandbox } from '../../src/sandbox/index.ts';
import { configureTelemetry } from '../../src/telemetry/configure-telemetry.ts';
import { scriptedModel } from '../helpers/scripted-model.ts';
import { describeSandbox, suiteSandbox } from '../sandbox/sandbox-availability.ts';
import {
  type FinishedSpan,
  type OtelHarness,
  ancestors,
  installOtel,
  renderTree,
  spanTree,
} from './otel-harness.ts';

const server = fileURLToPath(new URL('./fixtures/traced-mcp-server.ts', import.meta.url));
// Strings that must never reach a span unless inputs are recorded.
const SECRETS = {
  prompt: 'tok-USER-SECRET-42',
  serverEnv: 'srv-SECRET-TOKEN-7',
  argument: 'arg-SECRET-9',
  code: 'code-SECRET-11',
};
const BROKEN_CHART = [
  `API_KEY = "${SECRETS.code}"`,
  'import matplotlib',
  'matplotlib.use("Agg")',
  'import matplotlib.pyplot as plt',
  'plt.bar(regions, totals)',
].join('\n');
const FIXED_CHART = [
  'import matplotlib',
  'matplotlib.use("Agg")',
  'import matplotlib.pyplot as plt',
  'regions, totals = ["north", "south", "west"], [120, 95, 143]',
  'plt.bar(regions, totals)',
  'print(sum(totals))',
].join('\n');

let otel: OtelHarness;
let toolbox: McpToolbox;
let sandbox: DockerSandbox;

beforeAll(async () => {
  otel = installOtel();
  toolbox = await connectMcpServers({
    servers: {
      sales: {
        command: process.execPath,
        args: [server],
        env: { SALES_API_TOKEN: SECRETS.serverEnv },
      },
    },
  });
});
afterAll(async () => {
  await toolbox?.close();
  await otel?.uninstall();
});
afterEach(() => configureTelemetry());

/** The chart turn: MCP call, broken python, repaired python, answer. Returns the turn's spans. */
async function chartTurn(): Promise<{
  spans: FinishedSpan[];
  toolCallIds: string[];
  mcpOutput: string;
}> {
  otel.reset();
  const selection = toolSelection({ index: toolbox.index, topK: 2, pinned: ['python'] });
  const model = scriptedModel([
    {
      toolCalls: [{ name: 'sales_by_region', input: { quarter: 'Q3', apiKey: SECRETS.argument } }],
    },
    { toolCalls: [{ name: 'python', input: { code: BROKEN_CHART } }] },
    { toolCalls: [{ name: 'python', input: { code: FIXED_CHART } }] },
    { text: 'Here is the chart of Q3 sales by region.' },
  ]);
  const result = streamText({
    model: wrapLanguageModel({
      model,
      middleware: [selection.middleware, repairGuardMiddleware()],
    }),
    tools: { ...toolbox.tools, python: pythonTool({ sandbox }) },
    prompt: `Chart the Q3 sales by region (my token is ${SECRETS.prompt})`,
    stopWhen: stepCountIs(6),
    telemetry: { integrations: [otel.aiSdk], functionId: 'chart-turn' },
  });
  expect(await result.text).toBe('Here is the chart of Q3 sales by region.');
  const steps = await result.steps;
  const toolCallIds = steps.flatMap(step => step.toolCalls.map(call => call.toolCallId));
  const mcpOutput = JSON.stringify(steps[0]!.toolResults[0]!.output);
  return { spans: await otel.spans(), toolCallIds, mcpOutput };
}

const own = (spans: FinishedSpan[]) =>
  spans.filter(span => span.instrumentationScope.name === 'ai-toolbelt');
const named = (spans: FinishedSpan[], name: string) => spans.filter(span => span.name === name);

describeSandbox('a repaired chart turn as a trace', () => {
  suiteSandbox({ warmPoolSize: 1 }, created => {
    sandbox = created;
  });

  it('nests selection, MCP and sandbox spans under the AI SDK spans, with their attributes', async () => {
    const { spans, toolCallIds, mcpOutput } = await chartTurn();
    expect(renderTree(spanTree(spans))).toEqual([
      'invoke_agent mock-model-id',
      '  step 1',
      '    chat mock-model-id',
      '      retrieval tool-index',
      '    execute_tool sales_by_region',
      '      tools/call sales_by_region',
      '  step 2',
      '    chat mock-model-id',
      '      retrieval tool-index',
      '    execute_tool python',
      '      ai_toolbelt.python.attempt',
      '        ai_toolbelt.sandbox.run',
      '  step 3',
      '    chat mock-model-id',
      '      retrieval tool-index',
      '    execute_tool python',
      '      ai_toolbelt.python.attempt',
      '        ai_toolbelt.sandbox.run',
      '  step 4',
      '    chat mock-model-id',
      '      retrieval tool-index',
    ]);

    // Selection: what was offered and why; the same request keeps its tools every step.
    const selections = named(spans, 'retrieval tool-index');
    for (const span of selections) {
      expect(span.attributes).toMatchObject({
        'gen_ai.operation.name': 'retrieval',
        'gen_ai.data_source.id': 'tool-index',
        'gen_ai.request.top_k': 2,
        'ai_toolbelt.selection.retrieval': 'lexical',
        'ai_toolbelt.selection.mode': 'multi',
        'ai_toolbelt.selection.stability': 'fresh',
        'ai_toolbelt.selection.candidates': 9,
        'ai_toolbelt.selection.pinned': ['python'],
        'ai_toolbelt.selection.dropped': 6,
      });
      expect(span.attributes['ai_toolbelt.selection.tools']).toContain('sales_by_region');
      expect(span.attributes['ai_toolbelt.selection.query.length']).toBeGreaterThan(20);
    }
    expect(selections[0]!.attributes['ai_toolbelt.selection.cached']).toBe(false);
    expect(selections[1]!.attributes['ai_toolbelt.selection.cached']).toBe(true);
    const documents = JSON.parse(selections[0]!.attributes['gen_ai.retrieval.documents'] as string);
    expect(documents[0]).toMatchObject({ id: 'sales_by_region' });
    expect(documents[0].score).toBeGreaterThan(0);

    // The MCP call: a client span under the AI SDK's tool span, and the server got its context.
    const [call] = named(spans, 'tools/call sales_by_region');
    expect(call!.kind).toBe(2); // SpanKind.CLIENT
    expect(call!.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'sales_by_region',
      'gen_ai.tool.call.id': toolCallIds[0],
      'ai_toolbelt.mcp.server': 'sales',
      'network.transport': 'pipe',
    });
    expect(ancestors(call!, spans)).toEqual([
      'execute_tool sales_by_region',
      'step 1',
      'invoke_agent mock-model-id',
    ]);
    // The server answers with the `_meta` it received: this span's W3C trace context.
    const { traceId, spanId } = call!.spanContext();
    expect(mcpOutput).toContain(`00-${traceId}-${spanId}-01`);

    // The python attempts: the failure, its repair decision, then the repaired run.
    const [failed, repaired] = named(spans, 'ai_toolbelt.python.attempt');
    expect(failed!.attributes).toMatchObject({
      'gen_ai.tool.name': 'python',
      'gen_ai.tool.call.id': toolCallIds[1],
      'ai_toolbelt.python.attempt': 1,
      'ai_toolbelt.python.mode': 'agent',
      'ai_toolbelt.python.status': 'error',
      'ai_toolbelt.python.error_type': 'NameError',
      'ai_toolbelt.repair.decision': 'repair',
      'ai_toolbelt.repair.reason': 'repairable',
      'ai_toolbelt.repair.budget_left': 2,
      'error.type': 'NameError',
    });
    expect(failed!.attributes['ai_toolbelt.repair.fingerprint']).toMatch(/^[\w-]{16}$/);
    expect(failed!.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(repaired!.attributes).toMatchObject({
      'gen_ai.tool.call.id': toolCallIds[2],
      'ai_toolbelt.python.attempt': 2,
      'ai_toolbelt.python.status': 'success',
    });
    const [brokenRun, chartRun] = named(spans, 'ai_toolbelt.sandbox.run');
    for (const run of [brokenRun!, chartRun!]) {
      expect(run.attributes['ai_toolbelt.sandbox.engine']).toEqual(expect.any(String));
      expect(run.attributes['ai_toolbelt.sandbox.queue_ms']).toBeGreaterThanOrEqual(0);
      expect(run.attributes['ai_toolbelt.sandbox.warm']).toEqual(expect.any(Boolean));
      expect(run.attributes['ai_toolbelt.sandbox.run_ms']).toBeGreaterThan(0);
      expect(run.attributes['ai_toolbelt.sandbox.placements']).toBe(1);
    }
    expect(brokenRun!.attributes).toMatchObject({
      'ai_toolbelt.sandbox.status': 'error',
      'ai_toolbelt.sandbox.exit_code': 1,
      'ai_toolbelt.sandbox.images': 0,
    });
    expect(brokenRun!.attributes['ai_toolbelt.sandbox.stderr_bytes']).toBeGreaterThan(0);
    expect(chartRun!.attributes).toMatchObject({
      'ai_toolbelt.sandbox.status': 'success',
      'ai_toolbelt.sandbox.exit_code': 0,
      'ai_toolbelt.sandbox.images': 1,
      'ai_toolbelt.sandbox.stdout_bytes': 4, // "358\n"
    });
    expect(chartRun!.attributes['ai_toolbelt.sandbox.artifact_bytes']).toBeGreaterThan(1000);
  });

  it('records no query, code, arguments, tokens or server secrets unless inputs are recorded', async () => {
    const { spans } = await chartTurn();
    const ours = JSON.stringify(own(spans).map(span => [span.name, span.attributes, span.events]));
    expect(own(spans)).toHaveLength(9);
    for (const secret of Object.values(SECRETS)) expect(ours).not.toContain(secret);
    expect(ours).not.toContain('plt.bar');
    expect(ours).not.toContain('Chart the Q3');

    configureTelemetry({ recordInputs: true });
    const recorded = own((await chartTurn()).spans);
    const [selection] = named(recorded, 'retrieval tool-index');
    expect(selection!.attributes['gen_ai.retrieval.query.text']).toContain(SECRETS.prompt);
    const [attempt] = named(recorded, 'ai_toolbelt.python.attempt');
    expect(attempt!.attributes['ai_toolbelt.python.code']).toBe(BROKEN_CHART);
    const [call] = named(recorded, 'tools/call sales_by_region');
    expect(call!.attributes['gen_ai.tool.call.arguments']).toContain(SECRETS.argument);
    // Inputs, never what the server was started with.
    expect(JSON.stringify(recorded.map(span => span.attributes))).not.toContain(SECRETS.serverEnv);
  });

  it('inline mode: the repair model writes the next attempt inside an ai_toolbelt.repair span', async () => {
    otel.reset();
    const repairModel = scriptedModel([{ text: 'Fixed:\n```python\nprint(6 * 7)\n```' }]);
    const model = scriptedModel([
      { toolCalls: [{ name: 'python', input: { code: 'print(6 * seven)' } }] },
      { text: '42' },
    ]);
    const result = await generateText({
      model,
      tools: { python: pythonTool({ sandbox, repair: { model: repairModel }, maxRepairs: 1 }) },
      prompt: 'six times seven',
      stopWhen: stepCountIs(3),
      telemetry: { integrations: [otel.aiSdk] },
    });
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ state: 'success' });
    const spans = await otel.spans();
    const lines = renderTree(spanTree(spans));
    const at = lines.indexOf('    execute_tool python');
    const end = lines.findIndex((line, i) => i > at && !line.startsWith('      '));
    const tree = lines.slice(at, end === -1 ? undefined : end);
    expect(tree).toEqual([
      '    execute_tool python',
      '      ai_toolbelt.python.attempt',
      '        ai_toolbelt.sandbox.run',
      '      ai_toolbelt.repair',
      '      ai_toolbelt.python.attempt',
      '        ai_toolbelt.sandbox.run',
    ]);
    const [first, second] = named(spans, 'ai_toolbelt.python.attempt');
    expect(first!.attributes).toMatchObject({
      'ai_toolbelt.python.mode': 'inline',
      'ai_toolbelt.python.error_type': 'NameError',
      'ai_toolbelt.repair.decision': 'repair',
      'ai_toolbelt.repair.budget_left': 1,
    });
    expect(second!.attributes).toMatchObject({ 'ai_toolbelt.python.status': 'success' });
    expect(named(spans, 'ai_toolbelt.repair')[0]!.attributes).toEqual({
      'ai_toolbelt.python.attempt': 2,
    });
  });

  it('counts selections, MCP requests, warm-pool use and repair outcomes as metrics', async () => {
    await chartTurn();
    const metrics = await otel.metrics();
    const sum = (name: string, match: Record<string, unknown> = {}) =>
      (metrics.get(name) ?? [])
        .filter(point => Object.entries(match).every(([k, v]) => point.attributes[k] === v))
        .reduce(
          (total, point) =>
            total +
            (typeof point.value === 'number'
              ? point.value
              : (point.value as { count: number }).count),
          0,
        );
    expect(sum('ai_toolbelt.selection.duration')).toBeGreaterThanOrEqual(4);
    expect(
      sum('mcp.client.operation.duration', {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'sales_by_region',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(sum('mcp.client.operation.duration', { 'mcp.method.name': 'tools/list' })).toBe(1);
    expect(sum('ai_toolbelt.sandbox.warm_pool.acquisitions')).toBeGreaterThanOrEqual(2);
    expect(
      sum('ai_toolbelt.sandbox.run.duration', { 'ai_toolbelt.sandbox.status': 'error' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sum('ai_toolbelt.repair.outcomes', { 'ai_toolbelt.repair.outcome': 'repair' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sum('ai_toolbelt.repair.outcomes', { 'ai_toolbelt.repair.outcome': 'repaired' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sum('ai_toolbelt.sandbox.engine.state_changes', { 'ai_toolbelt.sandbox.engine.state': 'up' }),
    ).toBeGreaterThanOrEqual(1);
  });
});
