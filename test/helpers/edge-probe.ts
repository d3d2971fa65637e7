// Run by test/edge-runtime.test.ts in a fresh process: takes away what an edge
// runtime (Vercel Edge, Next's edge sandbox, Cloudflare Workers) does not have,
// loads the built root entry while recording every module it resolves, then
// runs what an edge route would: a lexical index, the selection middleware in
// a real generateText loop, and an embedding store read back by a second
// "cold start". Prints one JSON line.
//
//   node test/helpers/edge-probe.ts dist/index.js [edge]
//
// With `edge`, packages resolve as an Edge bundler resolves them (the
// `edge-light`, `worker` and `browser` export conditions, never `node`).
import { registerHooks } from 'node:module';
import { pathToFileURL } from 'node:url';

const entry = pathToFileURL(process.argv[2]!).href;
const EDGE_CONDITIONS = ['edge-light', 'worker', 'browser', 'import', 'module', 'default'];
const edge = process.argv[3] === 'edge';
let loaded: { url: string; parent: string | undefined }[] | undefined = [];
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, edge ? { ...context, conditions: EDGE_CONDITIONS } : context);
    loaded?.push({ url: result.url, parent: context.parentURL });
    return result;
  },
});

// Node builds its web globals (fetch, Response...) on first use, with its own Buffer: build them first.
void [fetch, Request, Response, Headers, FormData];
// Node's own globals are gone; `process` keeps only `env`, as edge runtimes polyfill it.
for (const name of ['Buffer', 'setImmediate', 'clearImmediate', 'global'])
  delete (globalThis as Record<string, unknown>)[name];
Object.defineProperty(globalThis, 'process', { value: { env: {} }, configurable: true });
// Edge runtimes refuse to compile WebAssembly from bytes at run time.
let wasmRefused = 0;
const { Module: _compile, ...wasm } = Object.getOwnPropertyDescriptors(WebAssembly);
globalThis.WebAssembly = Object.defineProperties(
  {
    Module: function Module() {
      wasmRefused++;
      throw new WebAssembly.CompileError('Wasm code generation disallowed by embedder');
    },
  },
  wasm,
) as unknown as typeof WebAssembly;

const root = (await import(entry)) as typeof import('../../src/index.ts');
const graph = loaded;
loaded = undefined;

// The test's own tools (an ai/test model stand-in, a memory store) come after the graph is taken.
const { generateText, stepCountIs, wrapLanguageModel } = await import('ai');
const { createStorage } = await import('unstorage');
const { BASIC_TOOLS, toToolSet } = await import('./catalog.ts');
const { embeddedCount, hashingEmbeddingModel } = await import('./hashing-embedding-model.ts');
const { scriptedModel } = await import('./scripted-model.ts');

// Lexical index + selection middleware, two steps of one request.
const index = root.createToolIndex();
await index.upsert(BASIC_TOOLS);
const selection = root.toolSelection({ index, topK: 2, pinned: ['python'] });
const model = scriptedModel([
  { toolCalls: [{ name: 'get_weather', input: { query: 'Oslo' } }] },
  { text: 'Rain in Oslo.' },
]);
const executed: string[] = [];
const result = await generateText({
  model: wrapLanguageModel({ model, middleware: selection.middleware }),
  tools: toToolSet(BASIC_TOOLS, executed),
  prompt: 'Will it rain in Oslo? Check the weather forecast.',
  stopWhen: stepCountIs(3),
});
const assistant = result.response.messages.find(message => message.role === 'assistant');
const markerParts = (Array.isArray(assistant?.content) ? assistant.content : []) as {
  providerOptions?: { aiToolbelt?: { toolSelection?: unknown } };
}[];

// A store written by one process and read by the next (another model object, same id).
const store = createStorage();
const first = hashingEmbeddingModel();
await root.createToolIndex({ embeddingModel: first, store }).upsert(BASIC_TOOLS);
const second = hashingEmbeddingModel();
const warm = root.createToolIndex({ embeddingModel: second, store });
await warm.upsert(BASIC_TOOLS);

console.log(
  JSON.stringify({
    graph,
    lexical: await index.search('send an email to Ana', { topK: 1 }),
    toolsPerCall: model.toolNamesPerCall(),
    executed,
    text: result.text,
    marker: markerParts.map(part => part.providerOptions?.aiToolbelt?.toolSelection)[0],
    storeKeys: await store.getKeys(),
    embeddedFirst: embeddedCount(first),
    embeddedWarm: embeddedCount(second),
    hybrid: await warm.search('weather forecast', { topK: 2 }),
    retrieval: warm.retrieval,
    wasmRefused,
  }),
);
