// The Next.js example's Edge route ranks a snapshot of the bundled MCP servers'
// tools (edge functions cannot start stdio servers): it must match what the
// servers really list, or the route would answer for tools that do not exist.
import { type McpToolbox, connectMcpServers } from 'ai-toolbelt/mcp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadMcpConfig } from '../../examples/hono-server/src/load-mcp-config.ts';
import { toolCatalog } from '../../examples/next-app/lib/tool-catalog.ts';

const config = new URL('../../examples/next-app/mcp.config.json', import.meta.url).pathname;
let toolbox: McpToolbox;

beforeAll(async () => {
  toolbox = await connectMcpServers({ servers: await loadMcpConfig(config) });
});
afterAll(() => toolbox?.close());

it("lib/tool-catalog.ts is the bundled servers' tools, as the chat route indexes them", () => {
  const listed = toolbox.index.names().map(name => {
    const { server, description } = toolbox.index.get(name)!;
    return { server, name, description };
  });
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
  expect([...toolCatalog].sort(byName)).toEqual(listed.sort(byName));
});
