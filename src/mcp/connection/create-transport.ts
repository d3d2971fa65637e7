import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import type { ConnectionAuth } from '../auth/connection-auth.ts';
import type { McpServerConfig } from '../types.ts';

/** Which transport a config selects. */
export type McpTransportKind = 'stdio' | 'http' | 'custom';

/**
 * Which transport a server config selects: `type` when given, otherwise
 * `command` (stdio), `url` (HTTP) or `createTransport` (custom).
 *
 * @example
 * ```ts
 * transportKind({ config: { url: 'http://127.0.0.1:3000/mcp' }, server: 'docs' }); // 'http'
 * ```
 */
export function transportKind({
  config,
  server,
}: {
  /** The server's config. */
  config: McpServerConfig;
  /** The server's name, for errors. */
  server: string;
}): McpTransportKind {
  if (config.type !== undefined) return config.type;
  if ('command' in config && typeof config.command === 'string') return 'stdio';
  if ('url' in config && config.url !== undefined) return 'http';
  if ('createTransport' in config && typeof config.createTransport === 'function') return 'custom';
  throw new InvalidArgumentError({
    argument: `servers.${server}`,
    value: config,
    message: 'give `command` (stdio), `url` (Streamable HTTP) or `createTransport`.',
  });
}

/**
 * Creates a fresh, unstarted transport for a server. The SDK's transport
 * modules are imported on first use, so loading `ai-toolbelt/mcp` stays cheap
 * and HTTP-only apps never load the stdio (child_process) code.
 *
 * @example
 * ```ts
 * const transport = await createTransport({ server: 'fs', config: { command: 'mcp-fs' } });
 * ```
 */
export async function createTransport({
  server,
  config,
  auth,
}: {
  /** The server's name, for errors. */
  server: string;
  /** How to reach it. */
  config: McpServerConfig;
  /** Sign-in for an HTTP server with `auth`. */
  auth?: ConnectionAuth | undefined;
}): Promise<Transport> {
  const kind = transportKind({ config, server });
  if (kind === 'stdio') {
    const {
      command,
      args = [],
      env,
      cwd,
      stderr = 'inherit',
    } = config as Extract<McpServerConfig, { command: string }>;
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    // The SDK forgets the child's pid as soon as it starts closing (and closes on its own when
    // the handshake fails); remembering it at start lets disposal make sure the child dies.
    class PidKeepingTransport extends StdioClientTransport {
      startedPid: number | undefined;
      override async start(): Promise<void> {
        await super.start();
        this.startedPid = this.pid ?? undefined;
      }
    }
    return new PidKeepingTransport({
      command,
      args,
      stderr,
      ...(env === undefined ? {} : { env }),
      ...(cwd === undefined ? {} : { cwd }),
    });
  }
  if (kind === 'http') {
    const { url, headers } = config as Extract<McpServerConfig, { url: string | URL }>;
    const parsed = httpUrl({ server, url });
    const { StreamableHTTPClientTransport } =
      await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    return new StreamableHTTPClientTransport(parsed, {
      ...(headers === undefined ? {} : { requestInit: { headers } }),
      ...(auth === undefined ? {} : { authProvider: auth.provider, fetch: auth.fetch }),
    });
  }
  return await (config as Extract<McpServerConfig, { createTransport: unknown }>).createTransport();
}

/**
 * The parsed URL of an HTTP server config, or an {@link InvalidArgumentError}
 * naming the server.
 *
 * @example
 * ```ts
 * httpUrl({ server: 'docs', url: 'http://127.0.0.1:3000/mcp' }).href;
 * ```
 */
export function httpUrl({
  server,
  url,
}: {
  /** The server's name, for errors. */
  server: string;
  /** The configured URL. */
  url: string | URL;
}): URL {
  try {
    return new URL(url);
  } catch (error) {
    throw new InvalidArgumentError({
      argument: `servers.${server}.url`,
      value: url,
      message: `not a valid URL (${(error as Error).message}).`,
    });
  }
}
