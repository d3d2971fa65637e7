// MCP spans against real servers: a stdio child (connect, paging, a tool error, what reaches
// the server in `_meta` when the app also propagates baggage) and the example's notes server
// over Streamable HTTP with OAuth sign-in (the sign-in span, the session as a digest, no codes
// or states in spans).
import { fileURLToPath } from 'node:url';
import { context, propagation } from '@opentelemetry/api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectMcpServers, type McpToolbox } from '../../src/mcp/index.ts';
import { callOptions, eventRecorder, fixture } from '../mcp/helpers.ts';
import { type NotesServer, oauthInMemory, signIn, startNotesServer } from '../mcp/sign-in.ts';
import { type FinishedSpan, type OtelHarness, installOtel } from './otel-harness.ts';

const server = fileURLToPath(new URL('./fixtures/traced-mcp-server.ts', import.meta.url));
let otel: OtelHarness;
let toolbox: McpToolbox;
let connectSpans: FinishedSpan[];

beforeAll(async () => {
  otel = installOtel();
  toolbox = await connectMcpServers({
    servers: { sales: { command: process.execPath, args: [server] } },
  });
  connectSpans = await otel.spans();
});
afterAll(async () => {
  await toolbox?.close();
  await otel?.uninstall();
});

const named = (spans: FinishedSpan[], name: string) => spans.filter(span => span.name === name);
const call = (box: McpToolbox, name: string, input: object = {}) =>
  (box.tools[name]!.execute as (input: object, options: object) => Promise<unknown>)(
    input,
    callOptions(),
  );

it('traces connecting: initialize, then each tools/list page', () => {
  const [initialize] = named(connectSpans, 'initialize');
  const [list] = named(connectSpans, 'tools/list');
  expect(initialize!.attributes).toMatchObject({
    'mcp.method.name': 'initialize',
    'ai_toolbelt.mcp.server': 'sales',
    'network.transport': 'pipe',
  });
  expect(list!.attributes).toMatchObject({
    'mcp.method.name': 'tools/list',
    'ai_toolbelt.mcp.page': 1,
    'ai_toolbelt.mcp.tools': 8,
  });
  expect(list!.kind).toBe(2); // CLIENT
});

it('sends the trace context in _meta but never the app baggage, and marks tool errors', async () => {
  otel.reset();
  const baggage = propagation.createBaggage({ 'user.email': { value: 'alice@example.com' } });
  const output = await context.with(propagation.setBaggage(context.active(), baggage), () =>
    call(toolbox, 'sales_by_region', { quarter: 'Q3' }),
  );
  const received = JSON.parse((output as { content: [{ text: string }] }).content[0].text)
    .received as { keys: string[]; traceparent: string };
  expect(received.keys).toEqual(['traceparent']);
  const [span] = named(await otel.spans(), 'tools/call sales_by_region');
  expect(received.traceparent).toBe(
    `00-${span!.spanContext().traceId}-${span!.spanContext().spanId}-01`,
  );

  const failed = await call(toolbox, 'fail_always').catch((error: unknown) => error);
  expect((failed as Error).message).toContain('The sales backend is down');
  const [errorSpan] = named(await otel.spans(), 'tools/call fail_always');
  expect(errorSpan!.attributes['error.type']).toBe('tool_error');
  expect(errorSpan!.status).toMatchObject({ code: 2, message: 'tool_error' });
  // The tool's error text is the app's, not the trace's.
  expect(JSON.stringify(errorSpan!.attributes)).not.toContain('backend is down');
});

it('traces sign-in and HTTP sessions without codes, states or session ids', async () => {
  const notes: NotesServer = await startNotesServer();
  const { oauth } = oauthInMemory();
  const box = await connectMcpServers({
    servers: { notes: { url: notes.url, auth: oauth } },
    userId: 'ada',
  });
  try {
    otel.reset();
    const { code, state } = await signIn(box.status().notes!.authorizationUrl, 'ada');
    await box.finishAuth({ code, state });
    expect(await call(box, 'whoami')).toMatchObject({
      content: [{ text: 'Signed in to notes as ada.' }],
    });
    const spans = await otel.spans();
    const [signInSpan] = named(spans, 'ai_toolbelt.mcp.sign_in');
    expect(signInSpan!.attributes).toEqual({ 'ai_toolbelt.mcp.server': 'notes' });
    expect(signInSpan!.status.code).toBe(0);
    const [whoami] = named(spans, 'tools/call whoami');
    expect(whoami!.attributes).toMatchObject({
      'network.transport': 'tcp',
      'mcp.protocol.version': expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    });
    const session = whoami!.attributes['mcp.session.id'] as string;
    expect(session).toMatch(/^[\w-]{22}$/);
    const ours = JSON.stringify(
      spans.filter(s => s.instrumentationScope.name === 'ai-toolbelt').map(s => s.attributes),
    );
    for (const secret of [code, state]) expect(ours).not.toContain(secret);
    // The server's session ids are UUIDs; none reaches a span in clear.
    expect(ours).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  } finally {
    await box.close();
    await notes.close();
  }
});

it('counts reconnect attempts after a server crash, and marks the crashed call', async () => {
  const recorder = eventRecorder();
  const box = await connectMcpServers({
    servers: { behaviour: fixture('behaviour-server.ts') },
    reconnect: { initialDelayMs: 50 },
    onEvent: recorder.onEvent,
  });
  try {
    otel.reset();
    await call(box, 'crash').catch(() => {});
    await recorder.next('connected', () => true, { from: 1 });
    const reconnects = (await otel.metrics()).get('ai_toolbelt.mcp.reconnects') ?? [];
    expect(reconnects).toContainEqual({
      value: expect.any(Number),
      attributes: { 'ai_toolbelt.mcp.server': 'behaviour', 'ai_toolbelt.mcp.outcome': 'attempt' },
    });
    const [crashed] = named(await otel.spans(), 'tools/call crash');
    expect(crashed!.attributes['error.type']).toBe('ToolbeltMcpConnectionError');
    expect(crashed!.status.code).toBe(2);
  } finally {
    await box.close();
  }
});
