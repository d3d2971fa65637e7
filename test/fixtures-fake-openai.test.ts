// The fake OpenAI server, driven through the real @ai-sdk/openai provider over HTTP.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, embedMany, generateText, stepCountIs, streamText, tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  startFakeOpenAI,
  type FakeOpenAI,
  type FakeOpenAIOptions,
} from './fixtures/fake-openai/fake-openai-server.ts';
import type { Script } from './fixtures/fake-openai/script.ts';

const started: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map(fake => fake.close()));
});

async function start(options: FakeOpenAIOptions) {
  const fake = await startFakeOpenAI(options);
  started.push(fake);
  return { fake, provider: createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' }) };
}

const weatherCalls: string[] = [];
const tools = {
  weather: tool({
    description: 'Current weather for a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      weatherCalls.push(city);
      return `Sunny in ${city}`;
    },
  }),
};

// Second turn answers from the tool result it received, as a real model would.
const weatherScript = (): Script => [
  { toolCalls: [{ name: 'weather', args: { city: 'Oslo' } }] },
  request => ({ text: `Report: ${request.toolResults.at(-1)?.output}` }),
];

describe('fake OpenAI server', () => {
  it('answers text through chat completions and the Responses API', async () => {
    const { fake, provider } = await start({ script: [{ text: 'Hello.' }, { text: 'Hi again.' }] });
    const chat = await generateText({ model: provider.chat('m'), prompt: 'Say hello' });
    const responses = await generateText({ model: provider('m'), prompt: 'Once more' });

    expect(chat.text).toBe('Hello.');
    expect(responses.text).toBe('Hi again.');
    expect(fake.requests.map(r => [r.path, r.stream, r.model, r.turnIndex])).toEqual([
      ['/v1/chat/completions', false, 'm', 0],
      ['/v1/responses', false, 'm', 1],
    ]);
    expect(fake.requests.map(r => r.lastUserText)).toEqual(['Say hello', 'Once more']);
    expect(chat.usage.inputTokens).toBeGreaterThan(0);
    expect(fake.remainingTurns()).toBe(0);
  });

  describe.each([
    { api: 'chat completions', path: '/v1/chat/completions', chat: true },
    { api: 'Responses API', path: '/v1/responses', chat: false },
  ])('$api', ({ path, chat }) => {
    it.each([{ stream: false }, { stream: true }])(
      'runs a tool call then a final text (stream: $stream)',
      async ({ stream }) => {
        const { fake, provider } = await start({ script: weatherScript() });
        const model = chat ? provider.chat('m') : provider('m');
        weatherCalls.length = 0;
        const options = { model, tools, stopWhen: stepCountIs(3), prompt: 'Weather in Oslo?' };
        const { text, steps } = stream
          ? await consume(streamText(options))
          : await generateText(options);

        expect(text).toBe('Report: Sunny in Oslo');
        expect(steps).toHaveLength(2);
        expect(weatherCalls).toEqual(['Oslo']);
        expect(fake.requests.map(r => [r.path, r.stream])).toEqual([
          [path, stream],
          [path, stream],
        ]);
        const [first, second] = fake.requests;
        expect(first!.toolNames).toEqual(['weather']);
        expect(first!.tools[0]).toMatchObject({
          type: 'function',
          name: 'weather',
          description: 'Current weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        });
        expect(second!.toolResults).toEqual([
          { callId: expect.any(String), name: 'weather', output: expect.stringContaining('Sunny') },
        ]);
        // The wire itself, not just our normalization: where each API puts the tools.
        const wireTool = chat ? first!.body.tools[0].function : first!.body.tools[0];
        expect(wireTool.name).toBe('weather');
      },
    );
  });

  it('streams text as several deltas and reports usage from the stream', async () => {
    const { fake, provider } = await start({
      script: [{ text: 'one two three four' }, { text: 'five six seven' }],
      streamDelayMs: 2,
    });
    for (const model of [provider.chat('m'), provider('m')]) {
      const result = streamText({ model, prompt: 'Count' });
      const deltas: string[] = [];
      for await (const delta of result.textStream) deltas.push(delta);
      expect(deltas.length).toBeGreaterThan(2);
      expect((await result.usage).outputTokens).toBeGreaterThan(0);
    }
    // The SDK asks chat completions for the usage chunk explicitly.
    expect(fake.requests[0]!.body.stream_options).toEqual({ include_usage: true });
  });

  it('embeds deterministically with configurable dimensions', async () => {
    const { fake, provider } = await start({ embeddingDimensions: 32 });
    const values = ['weather in Oslo', 'weather in Bergen', 'convert currency', 'weather in Oslo'];
    const { embeddings } = await embedMany({ model: provider.embedding('e'), values });
    const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

    expect(embeddings.map(e => e.length)).toEqual([32, 32, 32, 32]);
    expect(embeddings[3]).toEqual(embeddings[0]);
    expect(cosine(embeddings[0]!, embeddings[0]!)).toBeCloseTo(1);
    expect(cosine(embeddings[0]!, embeddings[1]!)).toBeGreaterThan(
      cosine(embeddings[0]!, embeddings[2]!),
    );
    const small = await embedMany({ model: provider.embedding('e'), values, dimensions: 8 });
    expect(small.embeddings[0]).toHaveLength(8);
    expect(fake.requests.map(r => r.api)).toEqual(['embeddings', 'embeddings']);
  });

  it('fails clearly when the script is exhausted', async () => {
    const { fake, provider } = await start({ script: [{ text: 'only one' }] });
    await generateText({ model: provider.chat('m'), prompt: 'first' });
    const error = await generateText({ model: provider.chat('m'), prompt: 'second', maxRetries: 0 })
      .then(() => undefined)
      .catch((err: unknown) => err);

    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(500);
    expect((error as APICallError).message).toMatch(/script exhausted: model call #2/);
    expect(fake.requests).toHaveLength(2);
  });

  it('plays scripted errors, which the SDK retries when retryable', async () => {
    const { fake, provider } = await start({
      script: [
        { error: { status: 429, message: 'Slow down', retryAfterMs: 1 } },
        { text: 'Recovered.' },
        { error: { status: 400, message: 'Bad tool schema', code: 'invalid_schema' } },
      ],
    });
    const retried = await generateText({ model: provider('m'), prompt: 'hi' });
    expect(retried.text).toBe('Recovered.');
    await expect(generateText({ model: provider('m'), prompt: 'hi' })).rejects.toThrow(
      'Bad tool schema',
    );
    expect(fake.requests).toHaveLength(3);
  });

  it('serves models, answers unknown paths with an OpenAI 404, and checks the key', async () => {
    const { fake } = await start({ models: ['a', 'b'], apiKey: 'sk-fake' });
    const get = (path: string, key = 'sk-fake') =>
      fetch(`${fake.baseURL}${path}`, { headers: { authorization: `Bearer ${key}` } });

    expect((await (await get('/models')).json()).data.map((m: { id: string }) => m.id)).toEqual([
      'a',
      'b',
    ]);
    const missing = await get('/nope');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: {
        message: 'Invalid URL (GET /v1/nope)',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    expect((await get('/models', 'wrong')).status).toBe(401);
    expect(fake.requests.map(r => r.path)).toEqual(['/v1/models', '/v1/nope', '/v1/models']);
  });

  it('close() stops listening (the port refuses connections)', async () => {
    let baseURL: string;
    {
      await using fake = await startFakeOpenAI({ script: [{ text: 'x' }] });
      baseURL = fake.baseURL;
      const provider = createOpenAI({ baseURL, apiKey: 'test' });
      await generateText({ model: provider.chat('m'), prompt: 'keep-alive connection' });
    }
    const error = await fetch(`${baseURL}/models`).catch((err: unknown) => err);
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED');
  });

  it('runs as a child process that prints its baseURL and exits on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['test/fixtures/fake-openai/main.ts', '--port', '0', '--embedding-dimensions', '16'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = once(child, 'exit');
    const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    const { baseURL } = JSON.parse(line) as { baseURL: string };
    expect(baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);

    await fetch(`${baseURL.replace(/\/v1$/, '')}/__fake/script`, {
      method: 'PUT',
      body: JSON.stringify([{ text: 'from the child' }]),
    });
    const provider = createOpenAI({ baseURL, apiKey: 'test' });
    expect((await generateText({ model: provider('m'), prompt: 'hi' })).text).toBe(
      'from the child',
    );
    const recorded = await (await fetch(`${baseURL.replace(/\/v1$/, '')}/__fake/requests`)).json();
    expect(recorded).toMatchObject([{ path: '/v1/responses', lastUserText: 'hi' }]);

    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
  });
});

// Drains a streamText result the way an app would, then returns what generateText would.
async function consume(result: {
  fullStream: AsyncIterable<{ type: string; error?: unknown }>;
  text: PromiseLike<string>;
  steps: PromiseLike<unknown[]>;
}) {
  for await (const part of result.fullStream) {
    if (part.type === 'error') throw part.error;
  }
  return { text: await result.text, steps: await result.steps };
}
