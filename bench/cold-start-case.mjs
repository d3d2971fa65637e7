// One cold start, run by bench/cold-start.ts in a fresh process: import the
// library (built dist/, as an app would), index the catalog, and return the
// first selection through the middleware. Prints one JSON line of timings
// measured from process start (performance.now() counts from the time origin).
// Plain JavaScript on purpose: a .ts entry adds Node's type-stripping start-up
// (about 130 ms here), which no deployed app pays.
//
//   MODE=lexical|hybrid CATALOG=tools.json QUERY='...' [OPENAI_BASE_URL=...]
//   [STORE=redis REDIS_URL=... | STORE=file CACHE_FILE=...] node bench/cold-start-case.ts
// MODE=lexical with APP_IMPORTS=1 (and the STORE settings) imports, and creates unused, what a
// hybrid app has: the provider and the store, to tell their cost from the dense channel's; with
// LEXICAL_STORE=1 too, the lexical index gets the store (and reads the catalog's analysis snapshot
// there, which the hybrid processes wrote).
// Where the provider is imported, the case then makes the app's first model call with the
// selection (the chat model of the fake server, as the middleware's `doGenerate` would): the
// first answer, where a lexical app pays for its HTTP client too (a hybrid one paid it embedding
// the query).
// EMBEDDER=local (MODE=hybrid) embeds with the local model (ai-toolbelt/local-embedding, its
// default all-MiniLM-L6-v2) instead of the provider, which the app still imports for its chat
// model; the model loads when the first selection embeds its query, as an app that does not call
// `load()` ahead gets it, and its worker is closed at the end so the process exits.
import { readFile } from 'node:fs/promises';

const env = process.env;
const started = performance.now(); // Node's own start-up, before this module ran
const lib = await import('../dist/index.js');
const hybrid = env.MODE === 'hybrid';
const local = hybrid && env.EMBEDDER === 'local';
const { localEmbeddingModel } = local
  ? await import('../dist/local-embedding/index.js')
  : { localEmbeddingModel: undefined };
const { createOpenAI } =
  hybrid || env.APP_IMPORTS === '1' ? await import('@ai-sdk/openai') : { createOpenAI: undefined };
const store =
  env.STORE === 'redis'
    ? await (async () => {
        const [{ createStorage }, { default: redisDriver }] = await Promise.all([
          import('unstorage'),
          import('unstorage/drivers/redis'),
        ]);
        return createStorage({ driver: redisDriver({ url: env.REDIS_URL }) });
      })()
    : undefined;
const imported = performance.now();

const tools = JSON.parse(await readFile(env.CATALOG, 'utf8'));
const read = performance.now();

// The local model's texts and calls, counted here (the fake server counts the provider's).
const localEmbeds = { calls: 0, texts: 0 };
const localModel = localEmbeddingModel?.();
if (localModel) {
  const doEmbed = localModel.doEmbed.bind(localModel);
  localModel.doEmbed = options => {
    localEmbeds.calls++;
    localEmbeds.texts += options.values.length;
    return doEmbed(options);
  };
}

const cacheEvents = [];
const index = lib.createToolIndex(
  hybrid
    ? {
        embeddingModel:
          localModel ??
          createOpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: 'bench' }).embedding(
            'text-embedding-3-small',
          ),
        ...(store ? { store } : { cache: env.CACHE_FILE }),
        onCacheEvent: event => cacheEvents.push(event),
      }
    : env.LEXICAL_STORE === '1' && store
      ? { store, onCacheEvent: event => cacheEvents.push(event) }
      : {},
);
await index.upsert(tools);
const indexed = performance.now();

const selection = lib.toolSelection({ index, topK: 5 });
const params = await selection.middleware.transformParams({
  type: 'generate',
  model: undefined,
  params: {
    prompt: [{ role: 'user', content: [{ type: 'text', text: env.QUERY }] }],
    tools: tools.map(tool => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema ?? { type: 'object' },
    })),
  },
});
const selected = performance.now();
const answer = createOpenAI
  ? await createOpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: 'bench' })
      .chat('gpt-4o-mini')
      .doGenerate(params)
  : undefined;
const answered = performance.now();
// CPU time of this process so far: the work itself, less sensitive than wall time to a busy machine.
const cpu = process.cpuUsage();
// Resident memory at the first selection: the index's vectors among the rest of the app.
const rss = process.memoryUsage().rss;
// Exact vectors read in the background after the first search (not timed), before the store closes.
await index.rescored();
await store?.dispose();
await localModel?.close();

console.log(
  JSON.stringify({
    coldStartMs: selected,
    firstAnswerMs: answer ? answered : undefined,
    cpuMs: (cpu.user + cpu.system) / 1000,
    rssMiB: rss / 2 ** 20,
    phases: {
      nodeMs: started,
      importMs: imported - started,
      catalogMs: read - imported,
      indexMs: indexed - read,
      selectMs: selected - indexed,
      // Reading the store (or file), from the cache's own `read` events: the start's, and the
      // first selection's (rescoring its candidates with the exact vectors).
      storeReadMs: cacheEvents.reduce(
        (sum, event) => sum + (event.type === 'read' ? event.ms : 0),
        0,
      ),
    },
    storeReads: cacheEvents.filter(event => event.type === 'read').length,
    snapshotHit: cacheEvents.some(event => event.snapshot && !event.analysis && event.hits > 0),
    analysisHit: cacheEvents.some(event => event.analysis && event.hits > 0),
    selected: (params.tools ?? []).map(tool => tool.name),
    cacheErrors: cacheEvents.filter(event => event.type !== 'read'),
    ...(localModel ? { embedCalls: localEmbeds.calls, embeddedTexts: localEmbeds.texts } : {}),
  }),
);
