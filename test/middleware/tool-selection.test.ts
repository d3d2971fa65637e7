import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { toolSelection } from '../../src/middleware/selection/tool-selection.ts';
import type { ToolSelectionEvent } from '../../src/middleware/selection/tool-selector.ts';
import { createToolIndex } from '../../src/retrieval/create-tool-index.ts';
import { BASIC_TOOLS, syntheticTools, toToolSet } from '../helpers/catalog.ts';
import { embeddedCount, hashingEmbeddingModel } from '../helpers/hashing-embedding-model.ts';
import { scriptedModel } from '../helpers/scripted-model.ts';

const catalog = [...BASIC_TOOLS, ...syntheticTools(30)];
const catalogOrder = catalog.map(t => t.name);
const inCatalogOrder = (names: string[]): string[] =>
  [...names].sort((a, b) => catalogOrder.indexOf(a) - catalogOrder.indexOf(b));

describe('toolSelectionMiddleware with generateText', () => {
  it('sends each step the top-k, pinned and already-called tools in catalog order', async () => {
    const events: ToolSelectionEvent[] = [];
    const selection = toolSelection({ topK: 3, pinned: ['python'], onSelect: e => events.push(e) });
    const model = scriptedModel([
      { toolCalls: [{ name: 'get_weather', input: { query: 'Paris' } }] },
      { toolCalls: [{ name: 'convert_currency', input: {} }] }, // a tool outside its top-k: still executes (not strict)
      { text: 'Sunny, 21°C.' },
    ]);
    const executed: string[] = [];
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: selection.middleware }),
      tools: toToolSet(catalog, executed),
      prompt: 'What is the weather forecast in Paris today?',
      stopWhen: stepCountIs(5),
    });
    expect(result.text).toBe('Sunny, 21°C.');
    const [first, second, third] = model.toolNamesPerCall();
    // only two tools share words with the request: retrieval does not pad with zero-score tools
    expect(first).toEqual(inCatalogOrder(['get_weather', 'get_forecast', 'python']));
    expect(second).toEqual(first); // the weather call is already in the set
    expect(third).toEqual(inCatalogOrder([...first!, 'convert_currency'])); // called tools stay (sticky)
    expect(executed).toEqual(['get_weather', 'convert_currency']);
    expect(events).toHaveLength(3);
    expect(events[0]).toMatchObject({
      query: 'What is the weather forecast in Paris today?',
      dropped: catalog.length - 3,
      retrieval: 'lexical', // no embedding model: onSelect says so
    });
    expect(events[0]!.selected.find(s => s.name === 'python')).toEqual({
      name: 'python',
      reason: 'pinned',
    });
    expect(events[0]!.selected.find(s => s.name === 'get_forecast')).toMatchObject({
      reason: 'top-k',
      score: expect.any(Number),
    });
    expect(events[2]!.selected.find(s => s.name === 'convert_currency')).toEqual({
      name: 'convert_currency',
      reason: 'called',
    });
  });

  it('gives retrieval its k seats even when a pinned tool ranks among the best', async () => {
    const events: ToolSelectionEvent[] = [];
    const selection = toolSelection({
      topK: 2,
      pinned: ['get_weather'],
      onSelect: e => events.push(e),
    });
    const model = scriptedModel([{ text: 'ok' }]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: selection.middleware }),
      tools: toToolSet(catalog, []),
      prompt: 'current weather conditions in Paris',
    });
    const reasons = events[0]!.selected.map(tool => `${tool.name}:${tool.reason}`);
    expect(reasons).toContain('get_weather:pinned');
    expect(reasons.filter(reason => reason.endsWith(':top-k'))).toHaveLength(2);
  });

  it('never drops a tool that toolChoice forces', async () => {
    const selection = toolSelection({ topK: 2 });
    const model = scriptedModel([
      { toolCalls: [{ name: 'book_flight', input: {} }] },
      { text: 'booked' },
    ]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: selection.middleware }),
      tools: toToolSet(catalog),
      toolChoice: { type: 'tool', toolName: 'book_flight' },
      prompt: 'What is the weather in Paris?',
      stopWhen: stepCountIs(1),
    });
    expect(model.toolNamesPerCall()[0]).toContain('book_flight');
  });

  it('keeps tools called in earlier turns of the conversation', async () => {
    const selection = toolSelection({ topK: 2 });
    const model = scriptedModel([{ text: 'ok' }]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: selection.middleware }),
      tools: toToolSet(catalog),
      messages: [
        { role: 'user', content: 'Email Bob the report' },
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'send_email', input: {} }],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'send_email',
              output: { type: 'text', value: 'sent' },
            },
          ],
        },
        { role: 'user', content: 'Now translate this text to French' },
      ],
    });
    const [tools] = model.toolNamesPerCall();
    expect(tools).toEqual(['send_email', 'translate_text']);
  });

  it('falls back to all tools of a small catalog, or pinned and recent ones, without a query', async () => {
    const small = toolSelection({ topK: 2, pinned: ['python'] });
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }]);
    const wrapped = wrapLanguageModel({ model, middleware: small.middleware });
    const images = [
      {
        role: 'user' as const,
        content: [{ type: 'file' as const, data: new Uint8Array([1]), mediaType: 'image/png' }],
      },
    ];
    await generateText({ model: wrapped, tools: toToolSet(BASIC_TOOLS), messages: images });
    expect(model.toolNamesPerCall()[0]).toEqual(BASIC_TOOLS.map(t => t.name));

    const big = toolSelection({ topK: 2, pinned: ['python'], sendAllBelow: 5 });
    const bigModel = scriptedModel([{ text: 'b' }]);
    await generateText({
      model: wrapLanguageModel({ model: bigModel, middleware: big.middleware }),
      tools: toToolSet(catalog),
      messages: [
        { role: 'user', content: 'Read the notes' },
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: {} }],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'read_file',
              output: { type: 'text', value: '...' },
            },
          ],
        },
        ...images,
      ],
    });
    expect(bigModel.toolNamesPerCall()[0]).toEqual(inCatalogOrder(['read_file', 'python']));
  });

  it('passes provider-defined tools through and leaves toolChoice none alone', async () => {
    const { middleware } = toolSelection({ topK: 1 });
    const tools = [
      ...catalog.map(t => ({
        type: 'function' as const,
        name: t.name,
        description: t.description,
        inputSchema: { type: 'object' as const },
      })),
      { type: 'provider' as const, id: 'openai.web_search' as const, name: 'web_search', args: {} },
    ];
    const params = {
      prompt: [
        {
          role: 'user' as const,
          content: [{ type: 'text' as const, text: 'stock price of ACME' }],
        },
      ],
      tools,
    };
    const out = await middleware.transformParams!({
      type: 'generate',
      params,
      model: scriptedModel([]),
    });
    expect(out.tools!.map(t => t.name)).toEqual(['stock_quote', 'web_search']);
    const none = await middleware.transformParams!({
      type: 'generate',
      params: { ...params, toolChoice: { type: 'none' } },
      model: scriptedModel([]),
    });
    expect(none.tools).toHaveLength(tools.length);
  });

  it('reports live-recall misses: calls to tools the model was not given', async () => {
    const misses: unknown[] = [];
    const selection = toolSelection({ topK: 2, onMiss: e => misses.push(e) });
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'book_flight', input: {} },
          { name: 'teleport', input: {} },
        ],
      },
      { text: 'x' },
    ]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: selection.middleware }),
      tools: toToolSet(catalog),
      prompt: 'weather in Paris',
      stopWhen: stepCountIs(2),
    });
    expect(misses).toEqual([
      {
        toolName: 'book_flight',
        query: 'weather in Paris',
        selected: ['get_weather', 'get_forecast'],
        inCatalog: true,
      },
      {
        toolName: 'teleport',
        query: 'weather in Paris',
        selected: ['get_weather', 'get_forecast'],
        inCatalog: false,
      },
    ]);
  });
});

describe('toolSelectionMiddleware with streamText', () => {
  it('narrows every step of a streamed multi-step loop and reports misses from the stream', async () => {
    const misses: string[] = [];
    const selection = toolSelection({
      topK: 2,
      pinned: ['python'],
      onMiss: e => misses.push(e.toolName),
    });
    const model = scriptedModel([
      { toolCalls: [{ name: 'stock_quote', input: { query: 'ACME' } }] },
      { toolCalls: [{ name: 'send_email', input: {} }] },
      { text: 'ACME is at 42.' },
    ]);
    const executed: string[] = [];
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: selection.middleware }),
      tools: toToolSet(catalog, executed),
      prompt: 'What is the latest stock price quote of ACME?',
      stopWhen: stepCountIs(5),
    });
    expect(await result.text).toBe('ACME is at 42.');
    const [first, second, third] = model.toolNamesPerCall();
    expect(first).toEqual(inCatalogOrder(['stock_quote', 'python']));
    expect(second).toEqual(first);
    expect(third).toEqual(inCatalogOrder([...first!, 'send_email']));
    expect(executed).toEqual(['stock_quote', 'send_email']);
    expect(misses).toEqual(['send_email']);
  });
});

describe('embedding and indexing', () => {
  it('embeds the query once per user turn, however many steps the loop takes', async () => {
    const embeddingModel = hashingEmbeddingModel();
    const index = createToolIndex({ embeddingModel });
    await index.upsert(catalog);
    const afterCatalog = embeddingModel.doEmbedCalls.length;
    const events: ToolSelectionEvent[] = [];
    const selection = toolSelection({ index, topK: 3, onSelect: event => events.push(event) });
    const model = scriptedModel([
      { toolCalls: [{ name: 'get_weather', input: {} }] },
      { toolCalls: [{ name: 'get_forecast', input: {} }] },
      { text: 'done' },
      { text: 'second turn' },
    ]);
    const wrapped = wrapLanguageModel({ model, middleware: selection.middleware });
    const tools = toToolSet(catalog);
    const first = await generateText({
      model: wrapped,
      tools,
      prompt: 'Weather in Oslo?',
      stopWhen: stepCountIs(5),
    });
    expect(model.calls).toHaveLength(3);
    expect(embeddingModel.doEmbedCalls.length - afterCatalog).toBe(1);
    expect(events.map(event => event.retrieval)).toEqual(['hybrid', 'hybrid', 'hybrid']);
    await generateText({
      model: wrapped,
      tools,
      messages: [
        ...[{ role: 'user' as const, content: 'Weather in Oslo?' }],
        ...first.responseMessages,
        { role: 'user', content: 'And in Rome?' },
      ],
    });
    expect(embeddingModel.doEmbedCalls.length - afterCatalog).toBe(2);
  });

  it('indexes tools the index lacks on the fly, in one batch, instead of dropping them', async () => {
    const embeddingModel = hashingEmbeddingModel();
    const index = createToolIndex({ embeddingModel });
    await index.upsert(catalog.slice(0, 10));
    const before = embeddedCount(embeddingModel);
    const selection = toolSelection({ index, topK: 2 });
    const model = scriptedModel([{ text: 'ok' }]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: selection.middleware }),
      tools: toToolSet(catalog),
      prompt: `Manage ${syntheticTools(30)[17]!.description.split(' ')[1]} records`,
    });
    expect(index.size).toBe(catalog.length);
    expect(embeddedCount(embeddingModel) - before).toBe(catalog.length - 10 + 1); // new tools + the query
    expect(model.toolNamesPerCall()[0]).toContain('widget_17');
  });
});
