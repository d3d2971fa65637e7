// The root entry stays free of dockerode and child_process so it loads in
// any server runtime; the sandbox and MCP live behind `ai-toolbelt/sandbox`
// and `ai-toolbelt/mcp`.
export * from './errors/index.ts';
export * from './middleware/index.ts';
export * from './python/index.ts';
export * from './repair/index.ts';
export * from './retrieval/index.ts';
// Types only: the sandbox implementation (dockerode) stays behind `ai-toolbelt/sandbox`.
export type * from './sandbox/types.ts';
