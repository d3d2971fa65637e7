// MCP discovery: time to discover 1,200 tools (50 per page) over stdio and
// Streamable HTTP with connectMcpServers (connect + every page + tool index),
// against a baseline measured in the same run: the bare SDK client paging
// tools/list (the seed's discover_mcp_tools, no index). Then the time from a
// notifications/tools/list_changed arriving to the index being updated (full
// re-list of 1,200 tools + incremental upsert), with the default 50 ms
// debounce and without it. One JSON line per transport; medians.
// Usage: node bench/mcp.ts [--runs 5] [--changes 10] (writes bench/results/mcp.json)
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { connectMcpServers, type McpEvent, type McpServerConfig } from '../src/mcp/index.ts';
import { benchResults } from './bench-results.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, changes: { type: 'string', default: '10' } },
});
const runs = Number(values.runs);
const changes = Number(values.changes);
const TOOLS = 1200;
const results = benchResults({ name: 'mcp', command: 'npm run bench:mcp' });
const fixtures = fileURLToPath(new URL('../test/fixtures/mcp/', import.meta.url));
const env = { TOOL_COUNT: String(TOOLS), PAGE_SIZE: '50', CONTROL: '1' };

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number): number => Math.round(x * 10) / 10;

async function startHttpServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [`${fixtures}http-server.ts`], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

/** The seed's algorithm on the bare SDK: connect, page through tools/list. */
async function baselineDiscover(transport: Transport): Promise<number> {
  const started = performance.now();
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    count += page.tools.length;
    cursor = page.nextCursor;
  } while (cursor);
  const elapsed = performance.now() - started;
  if (count !== TOOLS) throw new Error(`baseline saw ${count} tools`);
  await client.close();
  return elapsed;
}

async function discover(config: McpServerConfig): Promise<number> {
  const started = performance.now();
  const toolbox = await connectMcpServers({ servers: { bench: config } });
  const elapsed = performance.now() - started;
  if (toolbox.index.names().length !== TOOLS) throw new Error('not every tool was indexed');
  await toolbox.close();
  return elapsed;
}

/** Times list_changed (as received) -> synced index, alternating add/remove of one tool. */
async function listChangedToIndex(config: McpServerConfig, debounceMs: number): Promise<number> {
  const events: (McpEvent & { at: number })[] = [];
  const toolbox = await connectMcpServers({
    servers: { bench: config },
    listChangedDebounceMs: debounceMs,
    onEvent: event => void events.push({ ...event, at: performance.now() }),
  });
  const samples: number[] = [];
  const options = { toolCallId: 'bench', messages: [], context: undefined as never };
  for (let i = 0; i < changes; i++) {
    const from = events.length;
    const [tool, names] =
      i % 2 === 0 ? ['add_tools', ['bench_extra']] : ['remove_tools', ['bench_extra']];
    await toolbox.tools[tool]!.execute!({ names }, options);
    const synced = await waitFor(() =>
      events.slice(from).find(e => e.type === 'synced' && e.added.length + e.removed.length > 0),
    );
    const notified = events.slice(from).find(e => e.type === 'list-changed')!;
    if (toolbox.index.has('bench_extra') !== (i % 2 === 0)) throw new Error('index did not follow');
    samples.push(synced.at - notified.at);
  }
  await toolbox.close();
  return median(samples);
}

async function waitFor<T>(check: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise(resolve => setTimeout(resolve, 1));
  }
}

const http = await startHttpServer();
try {
  const stdio: McpServerConfig = {
    command: process.execPath,
    args: [`${fixtures}catalog-server.ts`],
    env,
  };
  const transports = [
    {
      transport: 'stdio',
      config: stdio,
      baseline: () =>
        new StdioClientTransport({ command: process.execPath, args: stdio.args!, env }),
    },
    {
      transport: 'http',
      config: { url: http.url } satisfies McpServerConfig,
      baseline: () => new StreamableHTTPClientTransport(new URL(http.url)),
    },
  ] as const;
  for (const { transport, config, baseline } of transports) {
    await discover(config); // warm-up: module loading, JIT
    const ours: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < runs; i++) {
      bare.push(await baselineDiscover(baseline()));
      ours.push(await discover(config));
    }
    const discoverMs = median(ours);
    const baselineDiscoverMs = median(bare);
    const line = {
      transport,
      tools: TOOLS,
      pageSize: 50,
      discoverMs: round(discoverMs),
      baselineDiscoverMs: round(baselineDiscoverMs),
      ratioToBaseline: Math.round((discoverMs / baselineDiscoverMs) * 100) / 100,
      listChangedToIndexMs: round(await listChangedToIndex(config, 50)),
      debounceMs: 50,
      listChangedToIndexNoDebounceMs: round(await listChangedToIndex(config, 0)),
      runs,
      changes,
    };
    results.row(line);
  }
} finally {
  http.child.kill('SIGTERM');
}
await results.save();
