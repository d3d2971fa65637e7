import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { connectMcpServers, McpConnectionError } from '../../src/mcp/index.ts';
import {
  callOptions,
  childPids,
  eventRecorder,
  fixture,
  fixturePath,
  isRunning,
  waitFor,
} from './helpers.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await waitFor(() => childPids().length === 0, { what: 'fixture processes to exit' });
});

/** Runs the HTTP fixture as its own process (so it can really die), on `port` or a random one. */
async function spawnHttpServer(
  port = 0,
): Promise<{ url: string; port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [fixturePath('http-server.ts')], {
    env: { ...process.env, PORT: String(port), TOOL_COUNT: '60', PAGE_SIZE: '25' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const { url } = JSON.parse(line) as { url: string };
  return { url, port: Number(new URL(url).port), child };
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

describe('crash and reconnect', () => {
  it('fails a call that crashes its stdio server with a clear error, then respawns it', async () => {
    const recorder = eventRecorder();
    const toolbox = await connectMcpServers({
      servers: { behaviour: fixture('behaviour-server.ts') },
      reconnect: { initialDelayMs: 200 },
      onEvent: recorder.onEvent,
    });
    cleanups.push(() => toolbox.close());
    const firstPid = toolbox.status().behaviour!.pid!;

    const error = await toolbox.tools.crash!.execute!({}, callOptions()).catch((e: unknown) => e);
    expect(McpConnectionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /MCP server "behaviour" went away while running "crash"/,
    );
    // While it is down, its tools fail fast and say why.
    expect(toolbox.status().behaviour!.state).toBe('reconnecting');
    const early = await toolbox.tools.echo!.execute!({}, callOptions()).catch((e: unknown) => e);
    expect((early as Error).message).toMatch(/not connected; it is reconnecting/);
    expect(toolbox.tools.echo).toBeDefined();

    const connected = await recorder.next('connected', () => true, { from: 1 });
    expect(connected.pid).not.toBe(firstPid);
    expect(isRunning(firstPid)).toBe(false);
    expect(toolbox.status().behaviour).toMatchObject({
      state: 'ready',
      attempts: 0,
      pid: connected.pid,
    });
    expect(await toolbox.tools.pid!.execute!({}, callOptions())).toEqual({
      content: [{ type: 'text', text: String(connected.pid) }],
    });
  });

  it('gives up after maxAttempts (tools removed), and refresh() brings the server back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-refuse-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const flag = join(dir, 'refuse');
    const recorder = eventRecorder();
    const toolbox = await connectMcpServers({
      servers: {
        flaky: fixture('behaviour-server.ts', { REFUSE_IF_EXISTS: flag }),
        steady: fixture('catalog-server.ts', { TOOL_COUNT: '2' }),
      },
      reconnect: { initialDelayMs: 20, maxAttempts: 2 },
      onEvent: recorder.onEvent,
    });
    cleanups.push(() => toolbox.close());
    expect(toolbox.index.has('echo')).toBe(true);

    writeFileSync(flag, '');
    await toolbox.tools.crash!.execute!({}, callOptions()).catch(() => {});
    const gaveUp = await recorder.next('gave-up');
    expect(gaveUp.server).toBe('flaky');
    await recorder.next('synced', e => e.removed.includes('echo'));
    expect(toolbox.status().flaky).toMatchObject({ state: 'failed', tools: 0 });
    expect(toolbox.tools.echo).toBeUndefined();
    expect(toolbox.index.names().sort()).toEqual(['tool_0001', 'tool_0002']);

    rmSync(flag);
    const result = await toolbox.refresh();
    expect(result.added).toContain('echo');
    expect(toolbox.status().flaky!.state).toBe('ready');
    expect(toolbox.index.has('echo')).toBe(true);
  });

  it('notices a dead HTTP server, retries with backoff, and reconnects when it is back', async () => {
    const first = await spawnHttpServer();
    cleanups.push(() => kill(first.child));
    const recorder = eventRecorder();
    const toolbox = await connectMcpServers({
      servers: { web: { url: first.url } },
      reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
      onEvent: recorder.onEvent,
    });
    cleanups.push(() => toolbox.close());
    expect(Object.keys(toolbox.tools)).toHaveLength(60);

    await kill(first.child);
    await recorder.next('disconnected', e => e.server === 'web');
    const during = await toolbox.tools.tool_0001!.execute!({}, callOptions()).catch(
      (e: unknown) => e,
    );
    expect(McpConnectionError.isInstance(during)).toBe(true);
    // Several attempts fail while nothing listens on the port.
    await recorder.next('reconnecting', e => e.attempt >= 2);

    const second = await spawnHttpServer(first.port);
    cleanups.push(() => kill(second.child));
    await recorder.next('connected', () => true, { from: 1 });
    expect(toolbox.status().web!.state).toBe('ready');
    expect(await toolbox.tools.tool_0060!.execute!({ query: 'x' }, callOptions())).toEqual({
      content: [{ type: 'text', text: 'tool_0060 {"query":"x"}' }],
    });
  });
});
