import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolSelection } from '../../src/middleware/selection/tool-selection.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai/fake-openai-server.ts';
import { BASIC_TOOLS, syntheticTools, toToolSet } from '../helpers/catalog.ts';

// End to end over real HTTP: the real @ai-sdk/openai provider talks to a local
// fake OpenAI-compatible server, and the test reads which tool definitions
// actually reached the wire.
const catalog = [...BASIC_TOOLS, ...syntheticTools(200)];
let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});

const apis = [
  ['chat completions', (p: ReturnType<typeof createOpenAI>) => p.chat('fake-model')],
  ['responses', (p: ReturnType<typeof createOpenAI>) => p('fake-model')],
] as const;

describe.each(apis)('over HTTP with the %s API', (_label, pick) => {
  for (const mode of ['generate', 'stream'] as const) {
    it(`sends only the selected tools on every step (${mode})`, async () => {
      fake.setScript([
        { toolCalls: [{ name: 'stock_quote', args: { query: 'ACME' } }] },
        req => ({ text: `ACME: ${req.toolResults.at(-1)?.output}` }),
      ]);
      const first = fake.requests.length;
      const selection = toolSelection({ topK: 3, pinned: ['python'] });
      const model = wrapLanguageModel({
        model: pick(createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' })),
        middleware: selection.middleware,
      });
      const options = {
        model,
        tools: toToolSet(catalog),
        prompt: 'What is the latest stock price quote for ACME?',
        stopWhen: stepCountIs(3),
      };
      const text =
        mode === 'generate' ? (await generateText(options)).text : await streamText(options).text;
      expect(text).toContain('ACME: ');
      const sent = fake.requests
        .slice(first)
        .filter(r => r.api === 'chat' || r.api === 'responses');
      expect(sent).toHaveLength(2);
      for (const request of sent) {
        expect(request.stream).toBe(mode === 'stream');
        expect(request.toolNames).toEqual(['stock_quote', 'python']); // catalog order, not 200+ tools
        expect(request.tools[0]).toMatchObject({
          name: 'stock_quote',
          description: 'Latest stock price quote for a ticker symbol',
        });
      }
    });
  }
});

it('hybrid retrieval with the provider embedding model over HTTP', async () => {
  fake.setScript([{ text: 'ok' }]);
  const provider = createOpenAI({ baseURL: fake.baseURL, apiKey: 'test' });
  const selection = toolSelection({
    embeddingModel: provider.embedding('fake-embedding'),
    topK: 2,
  });
  const first = fake.requests.length;
  await generateText({
    model: wrapLanguageModel({
      model: provider.chat('fake-model'),
      middleware: selection.middleware,
    }),
    tools: toToolSet(catalog),
    prompt: 'Translate this text to German',
  });
  const requests = fake.requests.slice(first);
  const embeddings = requests.filter(r => r.api === 'embeddings');
  expect(embeddings.length).toBeGreaterThanOrEqual(2); // the catalog (batched), then the query
  const chat = requests.find(r => r.api === 'chat')!;
  expect(chat.toolNames).toContain('translate_text');
  expect(chat.toolNames).toHaveLength(2);
});
