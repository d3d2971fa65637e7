import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from '../../src/util/backoff-delay.ts';
import { connectMcpServers, McpPaginationError, McpTimeoutError } from '../../src/mcp/index.ts';
import { assignToolNames, listAllTools, toModelOutput } from '../../src/internal.ts';
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.ts';

describe('assignToolNames', () => {
  it('keeps unique names, namespaces collisions, and always satisfies [a-zA-Z0-9_-]{1,64}', () => {
    const long = 'x'.repeat(100);
    const tools = [
      { server: 'a', name: 'search' },
      { server: 'b', name: 'search' },
      { server: 'a', name: 'fs.read' },
      { server: 'a', name: 'fs_read' },
      { server: 'c', name: `${long}1` },
      { server: 'c', name: `${long}2` },
      { server: 'c', name: '' },
      { server: 'c', name: 'héllo wörld' },
    ];
    const names = assignToolNames({ tools });
    expect(names.slice(0, 2)).toEqual(['a__search', 'b__search']);
    expect(names[2]).toMatch(/^a__fs_read_[0-9a-f]{8}$/);
    expect(names[3]).toMatch(/^a__fs_read_[0-9a-f]{8}$/);
    expect(names[2]).not.toBe(names[3]);
    expect(names[4]).not.toBe(names[5]);
    expect(names[6]).toBe('tool');
    expect(names[7]).toBe('h_llo_w_rld');
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    // Deterministic: same input, same names, regardless of call.
    expect(assignToolNames({ tools })).toEqual(names);
  });

  it("prefixes every name with naming: 'always'", () => {
    const names = assignToolNames({ tools: [{ server: 'my.srv', name: 'go' }], naming: 'always' });
    expect(names).toEqual(['my_srv__go']);
  });
});

describe('toModelOutput', () => {
  it('maps audio, binary resources and unknown blocks', () => {
    expect(
      toModelOutput({
        content: [
          { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
          {
            type: 'resource',
            resource: { uri: 'file:///a/report.pdf', mimeType: 'application/pdf', blob: 'JVBE' },
          },
          { type: 'future', x: 1 },
        ],
      }),
    ).toEqual({
      type: 'content',
      value: [
        { type: 'file', mediaType: 'audio/wav', data: { type: 'data', data: 'AAAA' } },
        {
          type: 'file',
          mediaType: 'application/pdf',
          data: { type: 'data', data: 'JVBE' },
          filename: 'report.pdf',
        },
        { type: 'text', text: '{"type":"future","x":1}' },
      ],
    });
    expect(toModelOutput({ content: [] })).toEqual({ type: 'text', value: '' });
  });
});

describe('backoffDelayMs', () => {
  it('doubles per attempt within [half, full] and caps at maxDelayMs', () => {
    const at = (attempt: number, random: number) =>
      backoffDelayMs({ attempt, initialDelayMs: 100, maxDelayMs: 1_000, random: () => random });
    expect([at(1, 0), at(1, 0.999)]).toEqual([50, 100]);
    expect([at(3, 0), at(3, 0.999)]).toEqual([200, 400]);
    expect([at(10, 0), at(10, 0.999)]).toEqual([500, 1_000]);
  });
});

describe('listAllTools', () => {
  const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } });

  it('keeps the first of a name listed twice across pages', async () => {
    const pages: Record<string, { tools: ReturnType<typeof tool>[]; nextCursor?: string }> = {
      '': { tools: [tool('a'), tool('b')], nextCursor: '2' },
      '2': { tools: [tool('b'), tool('c')] },
    };
    const client = {
      listTools: async (params?: { cursor?: string }) => pages[params?.cursor ?? '']!,
    };
    const tools = await listAllTools({ client: client as never, server: 's' });
    expect(tools.map(t => t.name)).toEqual(['a', 'b', 'c']);
  });

  it('bounds the whole listing by timeoutMs, not each page', async () => {
    let calls = 0;
    const client = {
      listTools: (_params: unknown, options: { timeout: number }) => {
        calls++;
        // Each page answers just inside its own timeout, so only a total budget stops it.
        return new Promise(resolve =>
          setTimeout(() => resolve({ tools: [tool(`t${calls}`)], nextCursor: `c${calls}` }), 20),
        ).then(page => {
          if (options.timeout < 20)
            throw Object.assign(new Error('Request timed out'), { code: -32001 });
          return page;
        });
      },
    };
    const error = await listAllTools({
      client: client as never,
      server: 's',
      timeoutMs: 100,
    }).catch((e: unknown) => e);
    expect(McpTimeoutError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ operation: 'tools/list', timeoutMs: 100 });
    expect(calls).toBeLessThan(10);
  });

  it('reports the page count and cursor when paging never ends', async () => {
    let n = 0;
    const client = { listTools: async () => ({ tools: [tool(`t${n}`)], nextCursor: `c${n++}` }) };
    const error = await listAllTools({ client: client as never, server: 's', maxPages: 3 }).catch(
      (e: unknown) => e,
    );
    expect(McpPaginationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'too-many-pages', pages: 3, cursor: 'c2' });
  });
});

describe('connectMcpServers options', () => {
  it('rejects a server config without command, url or createTransport before starting anything', async () => {
    const error = await connectMcpServers({ servers: { odd: {} as never } }).catch(
      (e: unknown) => e,
    );
    expect(InvalidArgumentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/servers\.odd/);
  });
});

describe('custom transport', () => {
  it('connects through createTransport (in-memory pair) and creates a fresh transport per connect', async () => {
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
    const { FixtureCatalog, numberedTools } = await import('../fixtures/mcp/fixture-catalog.ts');
    const catalog = new FixtureCatalog({ tools: numberedTools({ count: 7 }), pageSize: 3 });
    let created = 0;
    const toolbox = await connectMcpServers({
      servers: {
        memory: {
          createTransport: async () => {
            created++;
            const [client, server] = InMemoryTransport.createLinkedPair();
            await catalog.createServer().connect(server);
            return client;
          },
        },
      },
    });
    try {
      expect(created).toBe(1);
      expect(Object.keys(toolbox.tools)).toHaveLength(7);
      expect(catalog.listCalls).toBe(3);
    } finally {
      await toolbox.close();
    }
  });
});

describe('module loading', () => {
  it('importing ai-toolbelt/mcp loads no child_process until a stdio server connects', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const barrel = new URL('../../src/mcp/index.ts', import.meta.url).href;
    const script = `
      const loaded = () => process.moduleLoadList.includes('NativeModule child_process');
      const mcp = await import(${JSON.stringify(barrel)});
      const before = loaded();
      const toolbox = await mcp.connectMcpServers({ servers: { x: { command: ${JSON.stringify(process.execPath)}, args: ['-e', ''] } } });
      await toolbox.close();
      console.log(JSON.stringify({ before, after: loaded() }));`;
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--input-type=module',
      '-e',
      script,
    ]);
    expect(JSON.parse(stdout)).toEqual({ before: false, after: true });
  });
});
