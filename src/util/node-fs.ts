// Node's file system, loaded on first use by the few features that work with
// files (the file-backed embedding cache, readToolCatalog, readEvalQueries), so
// the root entry loads on runtimes without one (edge). The specifier is not a
// literal, and the comments tell bundlers (webpack, Turbopack) to leave the
// import to the runtime: an Edge bundle would otherwise include it (a build
// warning per import, for modules that could never work there). Node resolves
// it as usual when the function runs.
const load = (specifier: string): Promise<unknown> =>
  import(/* webpackIgnore: true */ /* turbopackIgnore: true */ /* @vite-ignore */ specifier);

/** `node:fs/promises`, loaded when first needed. */
export const loadNodeFs = (): Promise<typeof import('node:fs/promises')> =>
  load('node:fs/promises') as Promise<typeof import('node:fs/promises')>;

/** `node:path`, loaded when first needed. */
export const loadNodePath = (): Promise<typeof import('node:path')> =>
  load('node:path') as Promise<typeof import('node:path')>;
