import { afterEach, describe, expect, it } from 'vitest';
import { createToolIndex } from '../../src/retrieval/create-tool-index.ts';
import { connectMcpServers, type McpToolbox } from '../../src/mcp/index.ts';
import { FixtureCatalog, numberedTools } from '../fixtures/mcp/fixture-catalog.ts';
import { startHttpFixture } from '../fixtures/mcp/http-server.ts';
import {
  callOptions,
  childPids,
  countingEmbeddingModel,
  eventRecorder,
  fixture,
  waitFor,
} from './helpers.ts';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  // Toolboxes before the servers they talk to.
  for (const resource of open.splice(0).reverse()) await resource.close();
  await waitFor(() => childPids().length === 0, { what: 'fixture processes to exit' });
});

async function call(toolbox: McpToolbox, name: string, input: unknown): Promise<unknown> {
  return await toolbox.tools[name]!.execute!(input, callOptions());
}

describe('list_changed', () => {
  it('re-lists every page and updates the index incrementally, re-embedding only changed tools', async () => {
    const { model, embedded } = countingEmbeddingModel();
    const recorder = eventRecorder();
    const toolbox = await connectMcpServers({
      servers: { dyn: fixture('dynamic-server.ts') },
      index: createToolIndex({ embeddingModel: model }),
      onEvent: recorder.onEvent,
    });
    open.push(toolbox);
    // 3 tools + 5 control tools, served 2 per page.
    expect(toolbox.index.names()).toHaveLength(8);
    expect(embedded).toHaveLength(8);

    let from = recorder.events.length;
    await call(toolbox, 'add_tools', { names: ['fresh_a', 'fresh_b'] });
    const added = await recorder.next('synced', e => e.added.length > 0, { from });
    expect(added).toMatchObject({
      added: ['fresh_a', 'fresh_b'],
      updated: [],
      removed: [],
      unchanged: 8,
    });
    expect(toolbox.index.get('fresh_a')).toMatchObject({
      server: 'dyn',
      description: 'Added fresh_a',
    });
    expect(Object.keys(toolbox.tools)).toContain('fresh_b');
    expect(embedded).toHaveLength(10);
    expect(embedded.slice(8).join('\n')).toMatch(/fresh_a[\s\S]*fresh_b|fresh_b[\s\S]*fresh_a/);

    from = recorder.events.length;
    await call(toolbox, 'describe_tool', { name: 'dyn_0002', description: 'Now sends invoices' });
    const updated = await recorder.next('synced', e => e.updated.length > 0, { from });
    expect(updated).toMatchObject({ added: [], updated: ['dyn_0002'], removed: [], upserted: 1 });
    expect(toolbox.index.get('dyn_0002')!.description).toBe('Now sends invoices');
    expect(embedded).toHaveLength(11);
    expect(embedded[10]).toContain('Now sends invoices');

    from = recorder.events.length;
    await call(toolbox, 'remove_tools', { names: ['dyn_0001', 'fresh_a'] });
    const removed = await recorder.next('synced', e => e.removed.length > 0, { from });
    expect(removed).toMatchObject({ removed: ['dyn_0001', 'fresh_a'], upserted: 0 });
    expect(toolbox.index.has('dyn_0001')).toBe(false);
    expect(toolbox.tools.fresh_a).toBeUndefined();
    expect(embedded).toHaveLength(11);
    expect(toolbox.index.names().sort()).toEqual(Object.keys(toolbox.tools).sort());
  });

  it('collapses a burst of notifications into one full re-list', async () => {
    const recorder = eventRecorder();
    const toolbox = await connectMcpServers({
      servers: { dyn: fixture('dynamic-server.ts') },
      onEvent: recorder.onEvent,
    });
    open.push(toolbox);
    const listCalls = async () =>
      Number(
        ((await call(toolbox, 'list_calls', {})) as { content: [{ text: string }] }).content[0]
          .text,
      );
    const before = await listCalls();
    const from = recorder.events.length;
    // On stdio the 20 notifications arrive before this call's response, all inside one debounce window.
    await call(toolbox, 'notify_burst', { times: 20 });
    expect(recorder.events.slice(from).filter(e => e.type === 'list-changed')).toHaveLength(20);
    await recorder.next('synced', () => true, { from });
    // One listing of 8 tools at 2 per page = 4 tools/list requests (not 20 x 4).
    expect((await listCalls()) - before).toBe(4);
    expect(recorder.events.slice(from).filter(e => e.type === 'relisted')).toHaveLength(1);
  });

  it('follows list_changed over Streamable HTTP (standalone SSE stream)', async () => {
    const catalog = new FixtureCatalog({ tools: numberedTools({ count: 120 }), pageSize: 50 });
    const http = await startHttpFixture({ catalog });
    open.push(http);
    const recorder = eventRecorder();
    const toolbox = await connectMcpServers({
      servers: { web: { url: http.url } },
      onEvent: recorder.onEvent,
    });
    open.push(toolbox);
    expect(toolbox.index.names()).toHaveLength(120);
    const from = recorder.events.length;
    catalog.remove('tool_0001');
    catalog.add({
      name: 'late_arrival',
      description: 'Added at run time',
      inputSchema: { type: 'object' },
    });
    await catalog.notify();
    const synced = await recorder.next('synced', e => e.added.length > 0, { from });
    expect(synced).toMatchObject({
      added: ['late_arrival'],
      removed: ['tool_0001'],
      unchanged: 119,
    });
    expect(toolbox.index.has('late_arrival')).toBe(true);
    expect(await call(toolbox, 'late_arrival', {})).toEqual({
      content: [{ type: 'text', text: 'late_arrival {}' }],
    });
  });

  it('renames on a new collision so every name stays unique', async () => {
    const recorder = eventRecorder();
    const toolbox = await connectMcpServers({
      servers: {
        dyn: fixture('dynamic-server.ts'),
        other: fixture('catalog-server.ts', { TOOL_NAMES: 'search', LABEL: 'other' }),
      },
      onEvent: recorder.onEvent,
    });
    open.push(toolbox);
    expect(toolbox.tools.search).toBeDefined();
    const from = recorder.events.length;
    await call(toolbox, 'add_tools', { names: ['search'] });
    const synced = await recorder.next('synced', e => e.added.length > 0, { from });
    expect(synced.added.sort()).toEqual(['dyn__search', 'other__search']);
    expect(synced.removed).toEqual(['search']);
    expect(await call(toolbox, 'other__search', {})).toEqual({
      content: [{ type: 'text', text: 'search from other' }],
    });
  });
});
