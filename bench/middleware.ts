// Tool-selection middleware, one JSON line per figure:
//  1. Cache stability: scripted multi-turn conversations from the dev sets (a request, a
//     short follow-up, another request, a follow-up), run with `stability: 'fresh'` and
//     `'sticky'`: the share of model calls whose tool list is byte-identical to the
//     previous call's, and how much of the per-turn fresh top-k (and of the gold tools)
//     each turn's list holds.
//  2. Time per model call at 1,000 and 10,000 tools: `firstStepMs` is a turn's first
//     call (retrieval; in hybrid mode the query embedding comes over HTTP from the local
//     fake OpenAI-compatible server, then fusion), `laterStepMs` a later step of the same
//     turn as generateText makes it: the model's tool call (with the selection marker the
//     middleware put on it, as `providerOptions`) and the tool's result appended to the
//     prompt, so the selection is read back from the conversation. Tool vectors are
//     pre-filled into the embedding cache, as a warm store would serve them.
//  3. Tool-definition tokens (o200k) per call in the wire format each API is sent
//     (chat completions and the Responses API), read from the requests the fake server
//     received: the whole catalog vs the selection.
//  4. Telemetry overhead (see below).
//  5. Warm start vs cold build at 1,000 and 10,000 tools (hybrid, the fake server's vectors): an
//     index built from the model (cold) and one loaded from the snapshots a first process left in
//     a store folder (warm), each in its own process, five of each alternating, answer the same
//     1,000 searches, each after a turn of the event loop as a server's requests come: the first
//     search, and the median of searches 901 to 1,000 (once the warm index's background work has
//     ended); medians over the processes, and warm / cold.
// Usage: node bench/middleware.ts (writes bench/results/middleware.json)
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, tool, type ToolSet, wrapLanguageModel } from 'ai';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { toolSelection } from '../src/middleware/selection/tool-selection.ts';
import { ToolSelector } from '../src/middleware/selection/tool-selector.ts';
import { readEvalQueries, readToolCatalog } from '../src/retrieval/eval/catalog-file.ts';
import { createEmbeddingCache } from '../src/retrieval/embedding-cache.ts';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createToolIndex } from '../src/retrieval/create-tool-index.ts';
import { toolEmbeddingText } from '../src/retrieval/tool-text.ts';
import type { ToolDescriptor } from '../src/retrieval/types.ts';
import { fakeEmbedding } from '../test/fixtures/fake-openai/embeddings.ts';
import { startFakeOpenAI } from '../test/fixtures/fake-openai/fake-openai-server.ts';
import { benchResults } from './bench-results.ts';
import { buildConversations, runConversations } from './conversations.ts';

const evalDir = join(import.meta.dirname, '..', 'test', 'fixtures', 'eval');
const TOP_K = 5;
const DIMENSIONS = 1536;
const EMBEDDING_MODEL = 'text-embedding-3-small';
const results = benchResults({ name: 'middleware', command: 'npm run bench:middleware' });
const STAND_IN = `fake-openai server over HTTP (hashed bag of words standing in for ${EMBEDDING_MODEL}), ${DIMENSIONS}-d`;

const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const round = (x: number): number => Math.round(x * 1000) / 1000;

// 1. Cache stability.
for (const set of ['dev', 'dev-multi']) {
  const catalog = await readToolCatalog(join(evalDir, set, 'tools.jsonl'));
  const queries = await readEvalQueries(join(evalDir, set, 'queries.jsonl'));
  const index = createToolIndex();
  await index.upsert(catalog);
  const conversations = buildConversations(queries);
  for (const stability of ['fresh', 'sticky'] as const) {
    const { middleware } = toolSelection({ index, topK: TOP_K, stability });
    const selector = new ToolSelector({ index, topK: TOP_K });
    const figures = await runConversations({
      middleware,
      selector,
      conversations,
      catalog,
      topK: TOP_K,
    });
    results.row({ bench: 'stability', set, stability, topK: TOP_K, ...figures });
  }
}

const catalog = await readToolCatalog(join(evalDir, 'dev', 'tools.jsonl'));
const queries = await readEvalQueries(join(evalDir, 'dev', 'queries.jsonl'));
const catalogOf = (size: number): ToolDescriptor[] =>
  Array.from({ length: size }, (_, i) => {
    const tool = catalog[i % catalog.length] as ToolDescriptor;
    return {
      ...tool,
      name: i < catalog.length ? tool.name : `${tool.name}_${Math.floor(i / catalog.length)}`,
    };
  });

type Prompt = { role: string; content: any[] }[];
type Middleware = ReturnType<typeof toolSelection>['middleware'];
const STEPS = 5;

/** The model's answer to one step, through the middleware's wrapGenerate (which marks it). */
async function callModel(middleware: Middleware, params: object) {
  const sent = (params as { tools?: { name: string }[] }).tools ?? [];
  // A model calls one of the tools it was given (not the pinned python tool).
  const name = sent.find(tool => tool.name !== 'python')?.name ?? 'python';
  return middleware.wrapGenerate!({
    doGenerate: async () =>
      ({
        content: [
          { type: 'tool-call', toolCallId: `call-${++calls}`, toolName: name, input: '{}' },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: {},
        warnings: [],
      }) as never,
    doStream: undefined as never,
    params: params as never,
    model: undefined as never,
  });
}
let calls = 0;

/**
 * What generateText appends after a step with tool calls: the assistant message (response
 * parts' providerMetadata kept as providerOptions) and the tool results.
 */
function appendStep({ prompt, result }: { prompt: Prompt; result: { content: any[] } }): void {
  prompt.push({
    role: 'assistant',
    content: result.content.map(({ providerMetadata, ...part }) => ({
      ...part,
      input: JSON.parse(part.input as string),
      ...(providerMetadata ? { providerOptions: providerMetadata } : {}),
    })),
  });
  prompt.push({
    role: 'tool',
    content: result.content.map(part => ({
      type: 'tool-result',
      toolCallId: part.toolCallId,
      toolName: part.toolName,
      output: { type: 'json', value: { ok: true } },
    })),
  });
}

await using fake = await startFakeOpenAI({ embeddingDimensions: DIMENSIONS });
const openai = createOpenAI({ baseURL: fake.baseURL, apiKey: 'bench' });

// 2. Time per call.
for (const size of [1000, 10000]) {
  const tools = catalogOf(size);
  const callTools = tools.map(t => ({
    type: 'function' as const,
    name: t.name,
    description: t.description ?? '',
    inputSchema: (t.inputSchema ?? { type: 'object' }) as never,
  }));
  for (const retrieval of ['lexical', 'hybrid'] as const) {
    let index = createToolIndex();
    if (retrieval === 'hybrid') {
      const embeddingModel = openai.embedding(EMBEDDING_MODEL);
      const cache = createEmbeddingCache({ maxEntries: size + 100 });
      await cache.write({
        modelId: `${embeddingModel.provider}:${embeddingModel.modelId}`,
        entries: tools.map(t => {
          const text = toolEmbeddingText(t);
          return {
            text,
            vector: Float32Array.from(fakeEmbedding({ text, dimensions: DIMENSIONS })),
          };
        }),
        persist: false,
      });
      index = createToolIndex({ embeddingModel, cache });
    }
    await index.upsert(tools);
    const { middleware } = toolSelection({ index, topK: TOP_K, pinned: ['python'] });
    const embeddingsBefore = fake.requests.filter(r => r.api === 'embeddings').length;
    const first: number[] = [];
    const later: number[] = [];
    const turns = queries.slice(0, 30);
    for (const { query } of turns) {
      const prompt: Prompt = [{ role: 'user', content: [{ type: 'text', text: query }] }];
      let stepZero = '';
      for (let step = 0; step < STEPS; step++) {
        // Each step gets a fresh tools array, as generateText builds one per step.
        const params = { prompt: [...prompt] as never, tools: [...callTools] };
        const started = performance.now();
        const sent = await middleware.transformParams!({
          type: 'generate',
          params,
          model: undefined as never,
        });
        (step === 0 ? first : later).push(performance.now() - started);
        const names = (sent.tools ?? []).map(tool => tool.name).join();
        if (step === 0) stepZero = names;
        // The marker path keeps the request's selection: a later step sends what the first did.
        else if (names !== stepZero) throw new Error(`step ${step} changed the selection`);
        appendStep({ prompt, result: await callModel(middleware, sent) });
      }
    }
    const embeddingCalls =
      fake.requests.filter(r => r.api === 'embeddings').length - embeddingsBefore;
    results.row({
      bench: 'step-time',
      tools: size,
      retrieval,
      ...(retrieval === 'hybrid' ? { embedder: STAND_IN } : {}),
      firstStepMs: round(median(first)),
      firstStepP90Ms: round(
        [...first].sort((a, b) => a - b)[Math.floor(first.length * 0.9)] as number,
      ),
      laterStepMs: round(median(later)),
      laterStepP90Ms: round(
        [...later].sort((a, b) => a - b)[Math.floor(later.length * 0.9)] as number,
      ),
      stepsPerTurn: STEPS,
      turns: turns.length,
      embeddingRequestsPerTurn: round(embeddingCalls / turns.length),
    });
  }
}

// 3. Tool tokens on the wire.
const toToolSet = (tools: ToolDescriptor[]): ToolSet =>
  Object.fromEntries(
    tools.map(t => [
      t.name,
      tool({
        description: t.description ?? '',
        inputSchema: jsonSchema((t.inputSchema ?? { type: 'object' }) as never),
        execute: async () => 'ok',
      }),
    ]),
  );
const wireTokens = (body: { tools?: unknown }): number =>
  encode(JSON.stringify(body.tools ?? [])).length;
const sample = queries.slice(0, 20);
for (const size of [200, catalog.length]) {
  const tools = toToolSet(catalog.slice(0, size));
  const index = createToolIndex();
  await index.upsert(catalog.slice(0, size));
  const selection = toolSelection({ index, topK: TOP_K });
  for (const api of ['chat', 'responses'] as const) {
    const model = api === 'chat' ? openai.chat('fake-model') : openai('fake-model');
    fake.setScript(() => ({ text: 'ok' }));
    const start = fake.requests.length;
    await generateText({ model, tools, prompt: sample[0]!.query, stopWhen: stepCountIs(1) });
    const all = wireTokens(fake.requests[start]!.body);
    const selected: number[] = [];
    for (const { query } of sample) {
      const at = fake.requests.length;
      await generateText({
        model: wrapLanguageModel({ model, middleware: selection.middleware }),
        tools,
        prompt: query,
        stopWhen: stepCountIs(1),
      });
      selected.push(wireTokens(fake.requests[at]!.body));
    }
    const mean = Math.round(selected.reduce((a, b) => a + b, 0) / selected.length);
    results.row({
      bench: 'tool-tokens',
      api: api === 'chat' ? 'chat completions' : 'responses',
      catalog: size,
      topK: TOP_K,
      tokensAll: all,
      tokensSelected: mean,
      reduction: round(1 - mean / all),
      queries: sample.length,
    });
  }
}

// 4. Telemetry overhead: time per model call (as in 2, lexical) with no OpenTelemetry
//    provider registered ("off": spies on the API count every tracer handed out and span
//    started, which must stay 0) and with an SDK registered ("on": a tracer and a meter
//    provider, each selection span recorded and batched to an exporter that drops it), in
//    alternating rounds of the same run.
{
  const { ProxyTracer, ProxyTracerProvider, context, metrics, trace } =
    await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { BatchSpanProcessor, TracerProvider } = await import('@opentelemetry/sdk-trace');
  const {
    MeterProvider,
    InMemoryMetricExporter,
    AggregationTemporality,
    PeriodicExportingMetricReader,
  } = await import('@opentelemetry/sdk-metrics');
  let exported = 0;
  const tracerProvider = new TracerProvider({
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: {
          export: (spans, done) => {
            exported += spans.length;
            done({ code: 0 });
          },
          shutdown: async () => {},
        },
      }),
    ],
  });
  const meterProvider = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
        exportIntervalMillis: 60_000,
      }),
    ],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  // Counted only in the rounds without telemetry, per catalog size: what the rows call `...Off`.
  const counted = { on: false, tracers: 0, spans: 0 };
  const getTracer = ProxyTracerProvider.prototype.getTracer;
  ProxyTracerProvider.prototype.getTracer = function (...args) {
    if (counted.on) counted.tracers++;
    return getTracer.apply(this, args);
  };
  const startSpan = ProxyTracer.prototype.startSpan;
  ProxyTracer.prototype.startSpan = function (...args) {
    if (counted.on) counted.spans++;
    return startSpan.apply(this, args);
  };
  const setTelemetry = (on: boolean) => {
    trace.disable();
    metrics.disable();
    context.disable();
    if (on) {
      context.setGlobalContextManager(contextManager);
      trace.setGlobalTracerProvider(tracerProvider);
      metrics.setGlobalMeterProvider(meterProvider);
    }
  };
  for (const size of [1000, 10000]) {
    const tools = catalogOf(size);
    const callTools = tools.map(t => ({
      type: 'function' as const,
      name: t.name,
      description: t.description ?? '',
      inputSchema: (t.inputSchema ?? { type: 'object' }) as never,
    }));
    const index = createToolIndex();
    await index.upsert(tools);
    const times = {
      off: { first: [] as number[], cached: [] as number[] },
      on: { first: [] as number[], cached: [] as number[] },
    };
    let callsOn = 0;
    const exportedBefore = exported;
    counted.tracers = 0;
    counted.spans = 0;
    for (let round = 0; round < 6; round++) {
      for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        setTelemetry(mode === 'on');
        counted.on = mode === 'off';
        // A fresh selection each round, so the first step of every turn retrieves.
        const { middleware } = toolSelection({ index, topK: TOP_K, pinned: ['python'] });
        for (const { query } of queries.slice(0, 30)) {
          const prompt = [
            { role: 'user' as const, content: [{ type: 'text' as const, text: query }] },
          ];
          for (let step = 0; step < 5; step++) {
            const params = { prompt, tools: [...callTools] };
            const started = performance.now();
            await middleware.transformParams!({
              type: 'generate',
              params,
              model: undefined as never,
            });
            (step === 0 ? times[mode].first : times[mode].cached).push(performance.now() - started);
            if (mode === 'on') callsOn++;
          }
        }
      }
    }
    counted.on = false;
    setTelemetry(false);
    await tracerProvider.forceFlush();
    results.row({
      bench: 'telemetry',
      tools: size,
      retrieval: 'lexical',
      offFirstStepMs: round(median(times.off.first)),
      onFirstStepMs: round(median(times.on.first)),
      offCachedStepMs: round(median(times.off.cached)),
      onCachedStepMs: round(median(times.on.cached)),
      firstStepOverheadMs: round(median(times.on.first) - median(times.off.first)),
      cachedStepOverheadMs: round(median(times.on.cached) - median(times.off.cached)),
      spansPerCallOn: round((exported - exportedBefore) / callsOn),
      tracersHandedOutOff: counted.tracers,
      spansStartedOff: counted.spans,
    });
  }
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
}
// 5. Warm start vs cold build: per-search cost once loaded, each index in its own process
//    (bench/warm-start-case.ts): in one heap, whichever index is built second searches slower.
{
  const ROUNDS = 5;
  const storeDir = await mkdtemp(join(tmpdir(), 'aitb-warm-'));
  const runCase = (mode: string, size: number) =>
    new Promise<Record<string, number | null>>((resolve, reject) => {
      execFile(
        process.execPath,
        [join(import.meta.dirname, 'warm-start-case.ts')],
        {
          env: {
            ...process.env,
            MODE: mode,
            SIZE: String(size),
            STORE_DIR: join(storeDir, String(size)),
            OPENAI_BASE_URL: fake.baseURL,
          },
          maxBuffer: 1 << 20,
        },
        (error, stdout) =>
          error ? reject(error) : resolve(JSON.parse(stdout.trim().split('\n').pop()!)),
      );
    });
  for (const size of [1000, 10000]) {
    await runCase('fill', size);
    const runs: Record<'cold' | 'warm', Record<string, number | null>[]> = { cold: [], warm: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of r % 2 === 0 ? (['warm', 'cold'] as const) : (['cold', 'warm'] as const))
        runs[mode].push(await runCase(mode, size));
    }
    const med = (mode: 'cold' | 'warm', field: string) =>
      median(runs[mode].map(run => run[field] as number));
    results.row({
      bench: 'warm-start',
      tools: size,
      retrieval: 'hybrid',
      embedder: STAND_IN,
      searches: 1000,
      processes: ROUNDS,
      coldLoadMs: round(med('cold', 'loadMs')),
      warmLoadMs: round(med('warm', 'loadMs')),
      coldFirstSearchMs: round(med('cold', 'firstSearchMs')),
      warmFirstSearchMs: round(med('warm', 'firstSearchMs')),
      coldSearch901to1000Ms: round(med('cold', 'search901to1000Ms')),
      warmSearch901to1000Ms: round(med('warm', 'search901to1000Ms')),
      warmOverCold: round(med('warm', 'search901to1000Ms') / med('cold', 'search901to1000Ms')),
      warmBackgroundDoneBySearch: Math.max(
        ...runs.warm.map(run => run.backgroundDoneBySearch ?? Number.POSITIVE_INFINITY),
      ),
    });
  }
  await rm(storeDir, { recursive: true, force: true });
}

await results.save();
