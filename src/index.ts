// The root entry runs on Node and on Edge runtimes: nothing it loads needs
// Node (no `node:` module, no Node global; test/edge-runtime.test.ts checks).
// The few features that work with files (a `path` embedding cache,
// readToolCatalog, readEvalQueries) load `node:fs` when called, so they are
// Node only. The sandbox (dockerode) and MCP (child processes) live behind
// `ai-toolbelt/sandbox` and `ai-toolbelt/mcp`, Node only.
export * from './chat/index.ts';
export * from './errors/index.ts';
export * from './middleware/index.ts';
export * from './python/index.ts';
export * from './repair/index.ts';
export * from './retrieval/index.ts';
export * from './telemetry/index.ts';
// Types only: the sandbox implementation (dockerode) stays behind `ai-toolbelt/sandbox`.
export type * from './sandbox/types.ts';
export type * from './sandbox/chart-types.ts';
