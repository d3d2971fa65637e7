import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { McpServerConfig } from 'ai-toolbelt/mcp';

/**
 * Reads an MCP config file (`{ "servers": { name: { command, args } | { url } } }`,
 * the shape `connectMcpServers` takes). stdio servers run in the file's folder
 * unless they name a `cwd`, so relative script paths work from anywhere, and
 * `"command": "node"` means this Node binary: the bundled servers are
 * TypeScript, which needs the Node >= 22 running this example, not whatever
 * `node` comes first on PATH.
 *
 * @example
 * ```ts
 * const servers = await loadMcpConfig('mcp.config.json');
 * const toolbox = await connectMcpServers({ servers });
 * ```
 */
export async function loadMcpConfig(path: string): Promise<Record<string, McpServerConfig>> {
  const file = resolve(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`Cannot read the MCP config ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const servers = (parsed as { servers?: unknown } | null)?.servers;
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers)) {
    throw new Error(`${file}: expected { "servers": { "<name>": { "command" | "url": ... } } }`);
  }
  return Object.fromEntries(
    Object.entries(servers as Record<string, McpServerConfig>).map(([name, server]) => {
      if (!('command' in server)) return [name, server];
      return [
        name,
        {
          ...server,
          command: server.command === 'node' ? process.execPath : server.command,
          cwd: resolve(dirname(file), server.cwd ?? '.'),
        },
      ];
    }),
  );
}
