// The Next.js example's process-wide toolbelt (lib/toolbelt.ts) opened for real: the bundled
// MCP servers and the notes server as child processes (python off). A start-up that fails must
// leave no child behind, since every later request tries again.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const app = new URL('../../examples/next-app/', import.meta.url);
type ToolbeltModule = {
  getToolbelt(): Promise<{ toolbox: { status(): Record<string, { state: string }> } }>;
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
  delete process.env.MCP_CONFIG;
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
