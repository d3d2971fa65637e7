// The Next.js example's process-wide toolbelt (lib/toolbelt.ts) opened for real: the bundled
// MCP servers and the notes server as child processes (python off). A start-up that fails must
// leave no child behind, since every later request tries again.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStorage } from 'unstorage';
import redisDriver from 'unstorage/drivers/redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeRedis, startRedisServer } from '../helpers/redis-server.ts';

const app = new URL('../../examples/next-app/', import.meta.url);
type ToolbeltModule = {
  getToolbelt(): Promise<{
    toolbox: {
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
  for (const name of ['MCP_CONFIG', 'REDIS_URL', 'MCP_TOKEN_KEY', 'SANDBOX_STATE_KEY'])
    delete process.env[name];
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
