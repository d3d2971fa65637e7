import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { describe, expect, it } from 'vitest';
import { toolSelection } from '../../src/middleware/selection/tool-selection.ts';
import { createToolIndex } from '../../src/retrieval/create-tool-index.ts';
import { BASIC_TOOLS, codeWord, syntheticTools, toToolSet } from '../helpers/catalog.ts';
import { scriptedModel } from '../helpers/scripted-model.ts';

const catalog = [...BASIC_TOOLS, ...syntheticTools(30)];

describe('strict mode (prepareStep companion)', () => {
  it('blocks execution of tools outside the selection', async () => {
    const selection = toolSelection({ topK: 2 });
    const executed: string[] = [];
    const tools = toToolSet(catalog, executed);
    const model = scriptedModel([
      { toolCalls: [{ name: 'book_flight', input: {} }] },
      { text: 'sorry' },
    ]);
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: selection.middleware }),
      tools,
      prompt: 'weather in Paris',
      prepareStep: selection.prepareStep(tools),
      stopWhen: stepCountIs(2),
    });
    expect(executed).toEqual([]);
    const errors = result.steps[0]!.content.filter(part => part.type === 'tool-error');
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as { error: unknown }).error)).toMatch(/book_flight/);
    expect(model.toolNamesPerCall()[0]).toEqual(['get_weather', 'get_forecast']);
  });

  it('lets selected tools execute, also without the middleware', async () => {
    const selection = toolSelection({ topK: 2 });
    const executed: string[] = [];
    const tools = toToolSet(catalog, executed);
    const model = scriptedModel([
      { toolCalls: [{ name: 'get_weather', input: {} }] },
      { text: 'sunny' },
    ]);
    const result = await generateText({
      model,
      tools,
      prompt: 'weather in Paris',
      prepareStep: selection.prepareStep(tools),
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe('sunny');
    expect(executed).toEqual(['get_weather']);
    expect(model.toolNamesPerCall()[0]).toEqual(['get_weather', 'get_forecast']);
  });
});

describe('search for toolSearch', () => {
  it('ranks the given tools by the shared index', async () => {
    const selection = toolSelection({ topK: 3 });
    const names = await selection.search({ query: 'translate this to French', tools: catalog });
    expect(names[0]).toBe('translate_text');
    const restricted = await selection.search({
      query: 'weather',
      tools: catalog.filter(t => t.name !== 'get_weather'),
    });
    expect(restricted).not.toContain('get_weather');
    expect(restricted[0]).toBe('get_forecast');
  });
});

describe('concurrency', () => {
  it('serves 200 concurrent streamText calls on a 1,000-tool catalog without cross-talk', async () => {
    const big = [...BASIC_TOOLS, ...syntheticTools(1000 - BASIC_TOOLS.length)];
    const tools = toToolSet(big);
    const index = createToolIndex();
    const selection = toolSelection({ index, topK: 3, pinned: ['python'] });
    const runs = Array.from({ length: 200 }, async (_, i) => {
      const target = `widget_${(i * 7) % (1000 - BASIC_TOOLS.length)}`;
      const word = codeWord(Number(target.split('_')[1]));
      const model = scriptedModel([
        { toolCalls: [{ name: target, input: {} }] },
        { text: `done ${i}` },
      ]);
      const result = streamText({
        model: wrapLanguageModel({ model, middleware: selection.middleware }),
        tools,
        prompt: `Please manage the ${word} records`,
        stopWhen: stepCountIs(3),
      });
      return { i, target, word, text: await result.text, given: model.toolNamesPerCall() };
    });
    const results = await Promise.all(runs);
    expect(index.size).toBe(1000); // indexed once, not per call
    const offered = big.map(t => ({ name: t.name, description: t.description }));
    for (const { i, target, word, text, given } of results) {
      expect(text).toBe(`done ${i}`);
      expect(given).toHaveLength(2);
      // No cross-talk: each call got exactly what its own query selects when run alone.
      const alone = await selection.selector.select({
        tools: offered,
        messages: [{ role: 'user', content: `Please manage the ${word} records` }],
      });
      expect(given[0]).toEqual([...alone.names]);
      expect(given[0]).toContain(target);
      expect(given[0]).toContain('python');
      expect(given[1]).toEqual(given[0]); // the called target was already in the set
    }
  });
});
