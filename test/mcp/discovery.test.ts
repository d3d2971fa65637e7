import { afterEach, describe, expect, it } from 'vitest';
import {
  connectMcpServers,
  McpConnectionError,
  McpPaginationError,
  type McpToolbox,
} from '../../src/mcp/index.ts';
import { FixtureCatalog, numberedTools } from '../fixtures/mcp/fixture-catalog.ts';
import { startHttpFixture, type HttpFixture } from '../fixtures/mcp/http-server.ts';
import { callOptions, childPids, fixture, waitFor } from './helpers.ts';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  // Toolboxes before the servers they talk to.
  for (const resource of open.splice(0).reverse()) await resource.close();
  await waitFor(() => childPids().length === 0, { what: 'fixture processes to exit' });
});
function track<T extends { close(): Promise<void> }>(resource: T): T {
  open.push(resource);
  return resource;
}

const expectedNames = numberedTools({ count: 1200 }).map(tool => tool.name);

describe('discovery', () => {
  it('discovers all 1,200 tools of a stdio server (24 pages of 50) exactly once', async () => {
    const toolbox = track(
      await connectMcpServers({ servers: { big: fixture('catalog-server.ts') } }),
    );
    const names = Object.keys(toolbox.tools);
    expect(names).toHaveLength(1200);
    expect([...names].sort()).toEqual([...expectedNames].sort());
    expect(toolbox.index.names().sort()).toEqual([...expectedNames].sort());
    expect(toolbox.index.get('tool_0777')).toMatchObject({
      server: 'big',
      description: expect.stringContaining('777'),
    });
    expect(toolbox.status().big).toMatchObject({
      state: 'ready',
      tools: 1200,
      pid: expect.any(Number),
    });
    const output = await toolbox.tools.tool_1200!.execute!({ query: 'x' }, callOptions());
    expect(output).toEqual({ content: [{ type: 'text', text: 'tool_1200 {"query":"x"}' }] });
  });

  it('discovers all 1,200 tools of a Streamable HTTP server (Hono) exactly once', async () => {
    const catalog = new FixtureCatalog({ tools: numberedTools({ count: 1200 }), pageSize: 50 });
    const http: HttpFixture = track(await startHttpFixture({ catalog }));
    const toolbox = track(await connectMcpServers({ servers: { web: { url: http.url } } }));
    expect(Object.keys(toolbox.tools).sort()).toEqual([...expectedNames].sort());
    expect(catalog.listCalls).toBe(24);
    expect(http.sessions()).toBe(1);
    const output = await toolbox.tools.tool_0001!.execute!({ query: 'q' }, callOptions());
    expect(output).toEqual({ content: [{ type: 'text', text: 'tool_0001 {"query":"q"}' }] });
    await toolbox.close();
    // close() ends the HTTP session on the server too.
    await waitFor(() => http.sessions() === 0, { what: 'session to be terminated' });
  });

  it.each([
    ['repeat', 'repeated-cursor', 2],
    ['endless', 'too-many-pages', 5],
  ] as const)(
    'stops a %s cursor with a clear error instead of hanging',
    async (mode, reason, pages) => {
      const toolbox = track(
        await connectMcpServers({
          servers: {
            broken: {
              ...fixture('catalog-server.ts', {
                CURSOR_MODE: mode,
                TOOL_COUNT: '20',
                PAGE_SIZE: '5',
              }),
              maxPages: 5,
            },
            fine: fixture('catalog-server.ts', { TOOL_COUNT: '3', TOOL_PREFIX: 'ok_' }),
          },
        }),
      );
      const { broken, fine } = toolbox.status();
      expect(broken!.state).toBe('failed');
      expect(McpPaginationError.isInstance(broken!.error)).toBe(true);
      expect(broken!.error).toMatchObject({ server: 'broken', reason, pages });
      expect(broken!.error!.message).toMatch(
        mode === 'repeat' ? /repeated the tools\/list cursor "c-stuck"/ : /maxPages/,
      );
      expect(fine!.state).toBe('ready');
      expect(Object.keys(toolbox.tools)).toEqual(['ok_0001', 'ok_0002', 'ok_0003']);
    },
  );

  it('reports servers that cannot start or be reached, and still serves the others', async () => {
    const toolbox = track(
      await connectMcpServers({
        servers: {
          missing: { command: '/nonexistent/mcp-server' },
          refused: { url: 'http://127.0.0.1:9/mcp' },
          exits: { command: process.execPath, args: ['-e', 'process.exit(1)'] },
          fine: fixture('catalog-server.ts', { TOOL_COUNT: '2' }),
        },
      }),
    );
    const status = toolbox.status();
    for (const name of ['missing', 'refused', 'exits']) {
      expect(status[name]!.state, name).toBe('failed');
      expect(McpConnectionError.isInstance(status[name]!.error), name).toBe(true);
      expect(status[name]!.error!.message).toContain(`MCP server "${name}"`);
    }
    expect(status.missing!.error!.message).toMatch(/ENOENT/);
    expect(status.fine!.state).toBe('ready');
    expect(Object.keys(toolbox.tools)).toEqual(['tool_0001', 'tool_0002']);
  });

  it('namespaces colliding names across servers and sanitises names for providers', async () => {
    const toolbox = track(
      await connectMcpServers({
        servers: {
          github: fixture('catalog-server.ts', {
            LABEL: 'github',
            TOOL_NAMES: 'search,create.issue,only_here',
          }),
          'gitlab.com': fixture('catalog-server.ts', {
            LABEL: 'gitlab',
            TOOL_NAMES: 'search,create.issue,list/projects',
          }),
        },
      }),
    );
    const names = Object.keys(toolbox.tools).sort();
    expect(names).toEqual(
      [
        'github__search',
        'github__create_issue',
        'only_here',
        'gitlab_com__search',
        'gitlab_com__create_issue',
        'list_projects',
      ].sort(),
    );
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(toolbox.index.get('gitlab_com__search')).toMatchObject({ server: 'gitlab.com' });
    // Each namespaced tool still calls its own server under the server's own name.
    expect(await toolbox.tools.github__search!.execute!({}, callOptions())).toEqual({
      content: [{ type: 'text', text: 'search from github' }],
    });
    expect(await toolbox.tools.gitlab_com__create_issue!.execute!({}, callOptions())).toEqual({
      content: [{ type: 'text', text: 'create.issue from gitlab' }],
    });
  });

  it('keeps other tools in a shared index and removes only its own on close', async () => {
    const base = await connectMcpServers({ servers: {} });
    await base.index.upsert([{ name: 'python', description: 'Run Python code' }]);
    const toolbox: McpToolbox<typeof base.index> = track(
      await connectMcpServers({
        servers: { small: fixture('catalog-server.ts', { TOOL_COUNT: '2' }) },
        index: base.index,
      }),
    );
    expect(toolbox.index.names().sort()).toEqual(['python', 'tool_0001', 'tool_0002']);
    await toolbox.close();
    expect(toolbox.index.names()).toEqual(['python']);
    expect(Object.keys(toolbox.tools)).toEqual([]);
  });
});
