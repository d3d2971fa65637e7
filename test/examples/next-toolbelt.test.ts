// The Next.js example's process-wide toolbelt (lib/toolbelt.ts) opened for real: the bundled
// MCP servers and the notes server as child processes (python off). A start-up that fails must
// leave no child behind, since every later request tries again. Tool retrieval uses the local
// embedding model when it is installed (its worker thread ends with the toolbelt), lexical
// without one, and says which.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStorage } from 'unstorage';
import redisDriver from 'unstorage/drivers/redis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { describeLocalModel, localModelPath } from '../helpers/local-model.ts';
import { describeRedis, startRedisServer } from '../helpers/redis-server.ts';

const app = new URL('../../examples/next-app/', import.meta.url);
type ToolbeltModule = {
  getToolbelt(): Promise<{
    embedder: { embeddingModel?: { doEmbed(options: { values: string[] }): Promise<unknown> } };
    toolbox: {
      index: {
        retrieval: string;
        search(query: string, options: { topK: number }): Promise<{ name: string }[]>;
      };
      status(): Record<string, { state: string }>;
      forUser(options: {
        userId: string;
      }): Promise<{ status(): Record<string, { authorizationUrl?: string }> }>;
    };
  }>;
  closeToolbelt(): Promise<void>;
};
let toolbelt: ToolbeltModule;
let dir: string;
const saved = { ...process.env };
const savedCwd = process.cwd();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'next-toolbelt-'));
  // As `next start` runs it: in the app's folder (the notes server's path is relative to it).
  process.chdir(app.pathname);
  Object.assign(process.env, { PYTHON_SANDBOX: 'off', OPENAI_API_KEY: '' });
  delete process.env.REDIS_URL;
  delete process.env.NOTES_MCP;
  toolbelt = (await import(new URL('lib/toolbelt.ts', app).href)) as ToolbeltModule;
});
afterEach(async () => {
  await toolbelt.closeToolbelt();
  for (const name of [
    'MCP_CONFIG',
    'REDIS_URL',
    'MCP_TOKEN_KEY',
    'SANDBOX_STATE_KEY',
    'AI_TOOLBELT_MODELS_DIR',
  ])
    delete process.env[name];
  vi.restoreAllMocks();
});
afterAll(async () => {
  process.chdir(savedCwd);
  process.env = saved;
  await rm(dir, { recursive: true, force: true });
});

/** This process's children running the bundled notes server, from /proc. */
async function notesServers(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = await readFile(`/proc/${entry}/status`, 'utf8');
      if (Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== process.pid) continue;
      if ((await readFile(`/proc/${entry}/cmdline`, 'utf8')).includes('notes-server.ts'))
        pids.push(Number(entry));
    } catch {
      // It exited between readdir and here.
    }
  }
  return pids;
}

describe.runIf(process.platform === 'linux')('the toolbelt', () => {
  it('starts one notes server with a good config, and ends it on close', async () => {
    const { toolbox } = await toolbelt.getToolbelt();
    expect(toolbox.status().notes?.state).toBe('per-user');
    expect(await notesServers()).toHaveLength(1);
    await toolbelt.closeToolbelt();
    expect(await notesServers()).toEqual([]);
  });

  it("gives the notes server only what it reads, none of the app's secrets", async () => {
    Object.assign(process.env, {
      MCP_TOKEN_KEY: 'test-only-secret-0123456789abcdef0123456789',
      SANDBOX_STATE_KEY: 'test-only-state-key-0123456789abcdef012345',
    });
    await toolbelt.getToolbelt();
    const [pid] = await notesServers();
    const environ = await readFile(`/proc/${pid}/environ`, 'utf8');
    const names = environ
      .split('\0')
      .filter(Boolean)
      .map(entry => entry.split('=')[0]);
    expect(names.filter(name => name !== 'NODE_ENV').sort()).toEqual([
      'NOTES_EXIT_WITH_STDIN',
      'NOTES_PORT',
      'PATH',
    ]);
    expect(environ).not.toContain('test-only');
  });

  it('leaves no notes server behind when MCP_CONFIG cannot be read, request after request', async () => {
    process.env.MCP_CONFIG = join(dir, 'missing.json');
    for (let request = 0; request < 3; request++)
      await expect(toolbelt.getToolbelt()).rejects.toThrow(/missing\.json/);
    expect(await notesServers()).toEqual([]);
  });

  it('ends the notes server it started when the toolbox refuses a server config', async () => {
    process.env.MCP_CONFIG = join(dir, 'bad-server.json');
    await writeFile(process.env.MCP_CONFIG, JSON.stringify({ servers: { bad: { auth: {} } } }));
    await expect(toolbelt.getToolbelt()).rejects.toThrow();
    expect(await notesServers()).toEqual([]);
  });
});

describe.runIf(process.platform === 'linux')('tool retrieval without the local model', () => {
  it('is lexical, and the log says how to get the local model', async () => {
    process.env.AI_TOOLBELT_MODELS_DIR = join(dir, 'no-models');
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const { toolbox, embedder } = await toolbelt.getToolbelt();
    expect(toolbox.index.retrieval).toBe('lexical');
    expect(embedder.embeddingModel).toBeUndefined();
    expect(log.mock.calls.map(call => call[0]).filter(line => /\[retrieval\]/.test(line))).toEqual([
      '[retrieval] lexical (no embedding model: run npx ai-toolbelt fetch-model for the local one, or set OPENAI_API_KEY)',
    ]);
  });
});

describeLocalModel('tool retrieval with the local model', 'all-MiniLM-L6-v2', () => {
  it('is hybrid, says so once, finds tools by meaning, and ends the worker on close', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const { toolbox, embedder } = await toolbelt.getToolbelt();
    expect(toolbox.index.retrieval).toBe('hybrid');
    expect(log.mock.calls.map(call => call[0]).filter(line => /\[retrieval\]/.test(line))).toEqual([
      `[retrieval] hybrid, local all-MiniLM-L6-v2 (${localModelPath('all-MiniLM-L6-v2')}), embeddings kept in memory (set REDIS_URL to keep embeddings across cold starts)`,
    ]);
    const [best] = await toolbox.index.search('will I need an umbrella tomorrow', { topK: 1 });
    expect(best?.name).toBe('forecast');
    await toolbelt.closeToolbelt();
    // Closed: its worker thread is gone, and a late call says so rather than waiting.
    await expect(embedder.embeddingModel!.doEmbed({ values: ['rain'] })).rejects.toMatchObject({
      reason: 'closed',
    });
  });
});

describeRedis('the toolbelt with REDIS_URL', () => {
  it('refuses to start without MCP_TOKEN_KEY, starting nothing; with it, sign-ins go to Redis', async () => {
    await using redis = await startRedisServer();
    process.env.REDIS_URL = redis.url;
    await expect(toolbelt.getToolbelt()).rejects.toThrow(
      /REDIS_URL is set but MCP_TOKEN_KEY is not/,
    );
    expect(await notesServers()).toEqual([]);

    process.env.MCP_TOKEN_KEY = 'test-only-secret-0123456789abcdef0123456789';
    const { toolbox } = await toolbelt.getToolbelt();
    // A browser's first chat starts its sign-in: the flow and the client registration are
    // written where every instance reads them.
    const mine = await toolbox.forUser({ userId: 'browser-one-0123456789' });
    expect(mine.status().notes?.authorizationUrl).toBeDefined();
    const other = createStorage({ driver: redisDriver({ url: redis.url }) });
    try {
      const keys = await other.getKeys();
      expect(keys.some(key => key.startsWith('ai-toolbelt:mcp-auth'))).toBe(true);
    } finally {
      await other.dispose();
    }
  });
});
