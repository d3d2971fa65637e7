// The Hono example's app in process (`app.request()`), with its real bundled MCP
// servers; only the model is faked (the fake OpenAI-compatible server).
import { createOpenAI } from '@ai-sdk/openai';
import { type McpToolbox, connectMcpServers } from 'ai-toolbelt/mcp';
import type { Sandbox } from 'ai-toolbelt/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../examples/hono-server/src/app.ts';
import { loadMcpConfig } from '../../examples/hono-server/src/load-mcp-config.ts';
import { embedderFromEnv } from '../../examples/hono-server/src/embedder-from-env.ts';
import { modelFromEnv } from '../../examples/hono-server/src/model-from-env.ts';
import { appOrigins } from '../../examples/hono-server/src/same-origin.ts';
import { DockerSandbox } from '../../src/sandbox/index.ts';
import { describeWith } from '../e2e/support/describe-e2e.ts';
import {
  EXPECTED_AVERAGE,
  PYTHON_ERROR,
  QUESTION,
  SELECTED_TOOL,
  weatherScenario,
} from '../e2e/support/weather-scenario.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai/fake-openai-server.ts';
import { answerText, chatRequest, dataParts, readUIChunks } from './ui-chunks.ts';

const config = new URL('../../examples/hono-server/mcp.config.json', import.meta.url).pathname;
// app.request() builds http://localhost/... requests: that is where this app is reached.
const origins = appOrigins({ publicUrl: 'http://localhost' });
let toolbox: McpToolbox;
let fake: FakeOpenAI;

beforeAll(async () => {
  toolbox = await connectMcpServers({ servers: await loadMcpConfig(config) });
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await toolbox?.close();
  await fake?.close();
});

const model = () => createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' }).chat('fake-model');

describe('without a model or a sandbox', () => {
  const app = () => createApp({ origins, toolbox, pythonProblem: 'no Docker here' });

  it('GET /healthz reports the MCP servers and what is missing', async () => {
    const response = await app().request('/healthz');
    expect(response.status).toBe(200);
    const health = await response.json();
    expect(health.mcp).toEqual([
      { name: 'weather', state: 'ready', tools: 5 },
      { name: 'calendar', state: 'ready', tools: 5 },
    ]);
    expect(health.model.configured).toBe(false);
    expect(health.model.problem).toContain('Set OPENAI_API_KEY');
    expect(health.python).toEqual({ enabled: false, problem: 'no Docker here' });
  });

  it('GET /healthz names the model server by its host only, never its path or credentials', async () => {
    const env = {
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: 'https://user:pa55@proxy.internal:8443/v1/tenant-42?token=s3cret',
    };
    const setup = modelFromEnv(env);
    expect(setup.description).toBe('gpt-4.1-mini (chat API at proxy.internal:8443)');
    expect(embedderFromEnv({ ...env, EMBEDDER: 'openai' }).description).toBe(
      'openai:text-embedding-3-small at proxy.internal:8443',
    );
    const health = await (
      await createApp({
        origins,
        toolbox,
        model: setup.model!,
        modelDescription: setup.description,
      }).request('/healthz')
    ).text();
    expect(health).toContain('proxy.internal:8443');
    expect(health).not.toMatch(/pa55|tenant-42|s3cret/);
  });

  it('GET /api/tools/search shows what retrieval picks', async () => {
    const response = await app().request('/api/tools/search?q=weather+forecast+for+Bergen&k=2');
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.results).toHaveLength(2);
    expect(body.results[0]).toMatchObject({ name: 'forecast', server: 'weather' });
    expect(body.results[0].description).toContain('forecast');

    const meeting = await (await app().request('/api/tools/search?q=cancel+my+meeting')).json();
    expect(meeting.results[0]).toMatchObject({ name: 'cancel_event', server: 'calendar' });
  });

  it('GET /api/tools/search explains a missing query or a bad k', async () => {
    const missing = await app().request('/api/tools/search');
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toContain('?q=');
    const badK = await app().request('/api/tools/search?q=weather&k=0');
    expect(badK.status).toBe(400);
  });

  it('POST /api/chat answers 503 with what to set, not a made-up answer', async () => {
    const response = await app().request('/api/chat', chatRequest('Hello'));
    expect(response.status).toBe(503);
    expect((await response.json()).error).toMatch(/OPENAI_API_KEY.*OPENAI_BASE_URL/);
  });

  it('serves the chat page and its assets', async () => {
    const page = await app().request('/');
    expect(await page.text()).toContain('/assets/chat.js');
    const script = await app().request('/assets/ui-stream.js');
    expect(script.headers.get('content-type')).toContain('javascript');
    expect((await app().request('/assets/..%2Fsrc%2Fapp.ts')).status).toBe(404);
  });

  it('answers without the python tool when there is no sandbox', async () => {
    fake.setScript([{ text: 'Hi!' }]);
    const first = fake.requests.length;
    const app = createApp({ origins, toolbox, model: model() });
    const chunks = await readUIChunks(await app.request('/api/chat', chatRequest(QUESTION)));
    expect(answerText(chunks)).toBe('Hi!');
    expect(fake.requests[first]?.toolNames).not.toContain('python');
    expect(fake.requests[first]?.toolNames).toHaveLength(3);
  });
});

describe('with a model', () => {
  it('rejects a body that is not UI messages', async () => {
    const app = createApp({ origins, toolbox, model: model() });
    const response = await app.request('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"messages":3}',
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toContain('UIMessage');
  });

  it('refuses a 20 MB body with 413 before reading it all', async () => {
    const app = createApp({ origins, toolbox, model: model() });
    const huge = JSON.stringify({
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'x'.repeat(20e6) }] }],
    });
    const declared = await app.request('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(huge.length) },
      body: huge,
    });
    expect(declared.status).toBe(413);
    expect((await declared.json()).error).toContain('larger than 12 MiB');
    // Without Content-Length (chunked), it is cut while streaming in.
    const streamed = await app.request('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Blob([huge]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it('refuses a message over the length cap with 400 naming the limit', async () => {
    const app = createApp({ origins, toolbox, model: model() });
    const response = await app.request('/api/chat', chatRequest('x'.repeat(20_001)));
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatch(
      /Message 1 is too long: 20001 characters \(at most 20000\)/,
    );
  });

  it('echoes at most 200 characters of the query in the selection part', async () => {
    fake.setScript([{ text: 'ok' }]);
    const app = createApp({ origins, toolbox, model: model() });
    const question = `weather in Oslo ${'please '.repeat(2000)}`;
    const chunks = await readUIChunks(await app.request('/api/chat', chatRequest(question)));
    const [selection] = dataParts<{ query: string }>(chunks, 'data-tool-selection');
    expect(selection!.query.length).toBeLessThanOrEqual(200);
    expect(selection!.query.startsWith('weather in Oslo')).toBe(true);
  });

  it('GET /api/tools/search refuses a query over 500 characters', async () => {
    const app = createApp({ origins, toolbox, model: model() });
    const response = await app.request(`/api/tools/search?q=${'weather+'.repeat(100)}`);
    expect(response.status).toBe(400);
    expect((await response.json()).error).toContain('at most 500');
  });

  it('streams the model server error as a clear message', async () => {
    fake.setScript([{ error: { status: 401, message: 'Incorrect API key provided.' } }]);
    const app = createApp({ origins, toolbox, model: model() });
    const chunks = await readUIChunks(await app.request('/api/chat', chatRequest('Hello')));
    const error = chunks.find(chunk => chunk.type === 'error');
    expect(error).toMatchObject({ errorText: expect.stringContaining('Incorrect API key') });
  });
});

describeWith({}, 'with a model and the sandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await DockerSandbox.create({ warmPoolSize: 1 });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('streams the tool selection, the failed attempt, the repair and the answer', async () => {
    fake.setScript(weatherScenario());
    const first = fake.requests.length;
    const app = createApp({ origins, toolbox, model: model(), sandbox });
    const response = await app.request('/api/chat', chatRequest(QUESTION));
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const chunks = await readUIChunks(response);

    const selections = dataParts<{ selected: Array<{ name: string; reason: string }> }>(
      chunks,
      'data-tool-selection',
    );
    expect(selections).toHaveLength(4); // one per model call
    expect(selections[0]?.selected.map(tool => tool.name)).toEqual([
      'current_weather',
      'forecast',
      SELECTED_TOOL,
      'python',
    ]);
    expect(selections[0]?.selected.at(-1)?.reason).toBe('pinned');

    const attempts = dataParts<{ state: string; attempt: number; error?: string; stdout?: string }>(
      chunks,
      'data-repair',
    );
    expect(attempts.map(a => [a.attempt, a.state])).toEqual([
      [1, 'failed'],
      [2, 'success'],
    ]);
    expect(attempts[0]?.error).toContain(PYTHON_ERROR);
    expect(attempts[1]?.stdout?.trim()).toBe(EXPECTED_AVERAGE);
    expect(answerText(chunks)).toContain(`was ${EXPECTED_AVERAGE} °C`);

    const calls = fake.requests.slice(first).filter(request => request.api === 'chat');
    expect(calls.map(call => call.toolNames.length)).toEqual([4, 4, 4, 4]);
    expect(calls[2]?.toolResults.at(-1)?.output).toContain(PYTHON_ERROR);
  });
});
