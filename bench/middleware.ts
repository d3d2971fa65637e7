// Tool-selection middleware costs, one JSON line each:
//  - per-step overhead of transformParams once the turn's query is cached, at
//    1,000 and 10,000 tools (lexical default and hybrid with a stand-in
//    embedding model), and embedding calls per user turn over a 5-step loop;
//  - tool-definition tokens per call, all tools vs the selection, counted with
//    the o200k tokenizer on the BFCL dev catalog (real API definitions).
// Usage: node bench/middleware.ts
import { join } from 'node:path';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { toolSelection } from '../src/middleware/tool-selection.ts';
import { readEvalQueries, readToolCatalog } from '../src/retrieval/catalog-file.ts';
import { createToolIndex } from '../src/retrieval/create-tool-index.ts';
import type { ToolDescriptor } from '../src/retrieval/types.ts';
import { hashingEmbeddingModel } from '../test/helpers/hashing-embedding-model.ts';

const dev = join(import.meta.dirname, '..', 'test', 'fixtures', 'eval', 'dev');
const catalog = await readToolCatalog(join(dev, 'tools.jsonl'));
const queries = await readEvalQueries(join(dev, 'queries.jsonl'));
const TOP_K = 5;

function catalogOf(size: number): ToolDescriptor[] {
  return Array.from({ length: size }, (_, i) => {
    const tool = catalog[i % catalog.length] as ToolDescriptor;
    return {
      ...tool,
      name: i < catalog.length ? tool.name : `${tool.name}_${Math.floor(i / catalog.length)}`,
    };
  });
}

const asCallTools = (tools: ToolDescriptor[]) =>
  tools.map(t => ({
    type: 'function' as const,
    name: t.name,
    description: t.description ?? '',
    inputSchema: (t.inputSchema ?? { type: 'object' }) as never,
  }));

const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const round = (x: number): number => Math.round(x * 1000) / 1000;

for (const size of [1000, 10000]) {
  for (const retrieval of ['lexical', 'hybrid'] as const) {
    const embeddingModel = hashingEmbeddingModel({ dimensions: 256 });
    const index = createToolIndex(retrieval === 'hybrid' ? { embeddingModel } : {});
    const tools = catalogOf(size);
    await index.upsert(tools);
    const { middleware } = toolSelection({ index, topK: TOP_K, pinned: ['python'] });
    const callTools = asCallTools(tools);
    const steps: number[] = [];
    let embedCalls = 0;
    const turns = queries.slice(0, 20);
    for (const { query } of turns) {
      const before = embeddingModel.doEmbedCalls.length;
      const prompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: query }] }];
      for (let step = 0; step < 5; step++) {
        // Each step gets a fresh tools array, as generateText builds one per step.
        const params = { prompt, tools: [...callTools] };
        const started = performance.now();
        await middleware.transformParams!({ type: 'generate', params, model: undefined as never });
        if (step > 0) steps.push(performance.now() - started); // step 0 embeds the query
      }
      embedCalls += embeddingModel.doEmbedCalls.length - before;
    }
    console.log(
      JSON.stringify({
        tools: size,
        retrieval,
        stepOverheadMs: round(median(steps)),
        stepOverheadP90Ms: round(
          [...steps].sort((a, b) => a - b)[Math.floor(steps.length * 0.9)] as number,
        ),
        embedCallsPerTurn: retrieval === 'hybrid' ? embedCalls / turns.length : 0,
      }),
    );
  }
}

// Tokens of the tool definitions as an OpenAI-style request carries them.
const definitionTokens = (tools: ToolDescriptor[]): number =>
  encode(
    JSON.stringify(
      tools.map(t => ({
        type: 'function',
        function: {
          name: t.name,
          description: t.description ?? '',
          parameters: t.inputSchema ?? {},
        },
      })),
    ),
  ).length;

for (const size of [200, catalog.length]) {
  const tools = catalog.slice(0, size);
  const names = new Set(tools.map(t => t.name));
  const index = createToolIndex();
  await index.upsert(tools);
  const { selector } = toolSelection({ index, topK: TOP_K });
  const tokensAll = definitionTokens(tools);
  const selected: number[] = [];
  for (const { query } of queries) {
    const selection = await selector.select({
      tools,
      messages: [{ role: 'user', content: query }],
    });
    selected.push(definitionTokens(tools.filter(t => selection.names.has(t.name))));
  }
  const tokensSelected = Math.round(selected.reduce((a, b) => a + b, 0) / selected.length);
  console.log(
    JSON.stringify({
      catalog: size,
      topK: TOP_K,
      tokensAll,
      tokensSelected,
      reduction: round(1 - tokensSelected / tokensAll),
      queries: queries.length,
      goldInCatalog: queries.filter(q => q.gold.every(g => names.has(g))).length,
    }),
  );
}
