import { describe, expect, it } from 'vitest';
import { connectMcpServers, McpConnectionError } from '../../src/mcp/index.ts';
import { callOptions, childPids, eventRecorder, fixture, isRunning, waitFor } from './helpers.ts';

describe('close', () => {
  it('ends every child process (by pid), fails calls in flight, and empties the toolset', async () => {
    const toolbox = await connectMcpServers({
      servers: {
        behaviour: fixture('behaviour-server.ts'),
        catalog: fixture('catalog-server.ts', { TOOL_COUNT: '100' }),
        dynamic: fixture('dynamic-server.ts'),
      },
    });
    const pids = Object.values(toolbox.status()).map(server => server.pid!);
    expect(pids).toHaveLength(3);
    expect(pids.every(isRunning)).toBe(true);
    expect(childPids().sort()).toEqual([...pids].sort());
    const echo = toolbox.tools.echo!;
    const inFlight = toolbox.tools.sleep!.execute!({ ms: 60_000 }, callOptions()).catch(
      (e: unknown) => e,
    );

    await toolbox.close();

    // close() resolves only once the children are gone.
    expect(pids.filter(isRunning)).toEqual([]);
    expect(childPids()).toEqual([]);
    const error = await inFlight;
    expect(McpConnectionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/closed/);
    expect(Object.keys(toolbox.tools)).toEqual([]);
    expect(toolbox.index.names()).toEqual([]);
    // A tool reference kept from before says why it cannot run.
    await expect(echo.execute!({}, callOptions())).rejects.toThrow(/the toolbox was closed/);
    await expect(toolbox.refresh()).rejects.toThrow(/closed/);
    await toolbox.close(); // idempotent
    expect(Object.values(toolbox.status()).map(server => server.state)).toEqual([
      'closed',
      'closed',
      'closed',
    ]);
  });

  it('works with `await using` (Symbol.asyncDispose)', async () => {
    let pid: number | undefined;
    {
      await using toolbox = await connectMcpServers({
        servers: { one: fixture('catalog-server.ts', { TOOL_COUNT: '1' }) },
      });
      pid = toolbox.status().one!.pid;
      expect(isRunning(pid!)).toBe(true);
    }
    expect(isRunning(pid!)).toBe(false);
  });

  it('cleans up when connecting is aborted, leaving no child behind', async () => {
    const controller = new AbortController();
    const recorder = eventRecorder();
    const connecting = connectMcpServers({
      servers: {
        slow: fixture('behaviour-server.ts', { START_DELAY_MS: '60000' }),
        fine: fixture('catalog-server.ts', { TOOL_COUNT: '1' }),
      },
      onEvent: recorder.onEvent,
      abortSignal: controller.signal,
    });
    // Abort once the quick server is up, i.e. while the slow one is mid-handshake.
    await recorder.next('connected', e => e.server === 'fine');
    expect(childPids()).toHaveLength(2);
    const reason = new Error('shutting down');
    controller.abort(reason);
    await expect(connecting).rejects.toBe(reason);
    expect(childPids()).toEqual([]);
  });

  it('stops reconnecting when closed during backoff', async () => {
    const recorder = eventRecorder();
    const toolbox = await connectMcpServers({
      servers: { behaviour: fixture('behaviour-server.ts') },
      reconnect: { initialDelayMs: 60_000 },
      onEvent: recorder.onEvent,
    });
    await toolbox.tools.crash!.execute!({}, callOptions()).catch(() => {});
    await recorder.next('reconnecting');
    await toolbox.close();
    expect(toolbox.status().behaviour!.state).toBe('closed');
    await waitFor(() => childPids().length === 0, { what: 'no children' });
    expect(recorder.events.filter(e => e.type === 'connected')).toHaveLength(1);
  });
});
