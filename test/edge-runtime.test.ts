// The root entry on an edge runtime: the built package, loaded in a process that
// has no Node globals and resolves packages as an Edge bundler does (see
// test/helpers/edge-probe.ts). The Next.js example's Edge route is the same
// promise through `next build` and `next start` (test/e2e/next-app.test.ts).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { toolEmbeddingText } from '../src/retrieval/tool-text.ts';
import { BASIC_TOOLS } from './helpers/catalog.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');
const entry = join(root, 'dist', 'index.js');
const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

type Probe = {
  graph: { url: string; parent?: string }[];
  lexical: { name: string }[];
  toolsPerCall: string[][];
  executed: string[];
  text: string;
  marker: { query: string; tools: string[]; seats: string[] };
  storeKeys: string[];
  embeddedFirst: number;
  embeddedWarm: number;
  hybrid: { name: string }[];
  retrieval: string;
  wasmRefused: number;
};

async function probe(mode: 'node' | 'edge'): Promise<Probe> {
  const { stdout } = await run(
    process.execPath,
    [join(import.meta.dirname, 'helpers', 'edge-probe.ts'), entry, mode],
    { cwd: root },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Probe;
}

const builtins = (graph: Probe['graph']) =>
  graph
    .filter(({ url }) => url.startsWith('node:'))
    .map(({ url, parent }) => `${url} <- ${parent}`);

describe('the root entry without Node', () => {
  let edge: Probe;
  let node: Probe;

  beforeAll(async () => {
    // The built package is what users load; `npm test` builds it first.
    const built = (await stat(entry)).mtimeMs;
    const sources = await readdir(join(root, 'src'), { recursive: true });
    for (const file of sources.filter(name => name.endsWith('.ts')))
      if ((await stat(join(root, 'src', file))).mtimeMs > built)
        throw new Error(`dist/ is older than src/${file}: run \`npm run build\` first`);
    [edge, node] = await Promise.all([probe('edge'), probe('node')]);
  }, 60_000);

  it('loads no Node built-in, resolved as an Edge bundler resolves packages', () => {
    expect(edge.graph.length).toBeGreaterThan(50); // the probe saw the whole graph
    expect(edge.graph.some(({ url }) => url.includes('/dist/retrieval/'))).toBe(true);
    expect(builtins(edge.graph)).toEqual([]);
  });

  it('loads no Node built-in from its own modules on Node either: files are opened on first use', () => {
    const own = node.graph.filter(({ parent }) => parent?.startsWith(`file://${root}/dist/`));
    expect(own.length).toBeGreaterThan(50);
    expect(builtins(own)).toEqual([]);
  });

  it('selects tools through the middleware in a generateText loop, without Node globals', () => {
    for (const run of [edge, node]) {
      expect(run.lexical.map(hit => hit.name)).toEqual(['send_email']);
      // Both steps of the request got the same selection: top-2 plus the pinned python.
      expect(run.toolsPerCall).toEqual([
        ['get_weather', 'get_forecast', 'python'],
        ['get_weather', 'get_forecast', 'python'],
      ]);
      expect(run.executed).toEqual(['get_weather']);
      expect(run.text).toBe('Rain in Oslo.');
      // The conversation marker keeps the same query hash as node:crypto made before.
      expect(run.marker.query).toBe(
        sha256('Will it rain in Oslo? Check the weather forecast.').slice(0, 16),
      );
    }
  });

  it('warm-starts from a store it wrote: same keys as node:crypto, vectors decoded without Buffer', () => {
    for (const run of [edge, node]) {
      const keys = BASIC_TOOLS.map(
        tool =>
          `ai-toolbelt:embeddings:mock-provider:hashing-test:${sha256(toolEmbeddingText(tool))}`,
      );
      expect([...run.storeKeys].sort()).toEqual(keys.sort());
      expect(run.embeddedFirst).toBe(BASIC_TOOLS.length);
      expect(run.embeddedWarm).toBe(0); // every stored vector decoded and accepted
      expect(run.retrieval).toBe('hybrid');
      expect(run.hybrid.map(hit => hit.name)).toEqual(['get_forecast', 'get_weather']);
      // The vectors were scanned in plain JavaScript: the runtime refused the WebAssembly kernel.
      expect(run.wasmRefused).toBeGreaterThan(0);
    }
  });
});
