import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type {
  ElicitRequest,
  ElicitResult,
  Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { McpConnectionError } from '../../errors/mcp-connection-error.ts';
import { McpTimeoutError } from '../../errors/mcp-timeout-error.ts';
import type { ConnectionAuth } from '../auth/connection-auth.ts';
import { createTransport } from './create-transport.ts';
import { disposeConnection } from './dispose-connection.ts';
import { isRequestTimeout, isUnauthorized } from '../error-codes.ts';
import { linkSignal } from '../../util/linked-signal.ts';
import { listAllTools } from '../catalog/list-all-tools.ts';
import { traceMcpRequest } from '../../telemetry/mcp-telemetry.ts';
import type { McpServerConfig } from '../types.ts';

const clientInfo = { name: 'ai-toolbelt', version: '0.1.0' };

/** A connected client with its first full tool listing. */
export type OpenedClient = {
  client: Client;
  transport: Transport;
  /** The stdio child's pid. */
  pid: number | undefined;
  tools: McpTool[];
};

/**
 * Creates a transport and client, performs the MCP handshake within
 * `connectTimeoutMs`, and reads every `tools/list` page. The SDK is imported
 * here, on first use. On failure everything is torn down (the child killed)
 * in the background, handed to `onDisposal` so a later `close()` can await it.
 *
 * @example
 * ```ts
 * const { client, tools } = await openClient({ server: 'fs', config, limits, signal, handlers, onDisposal });
 * ```
 */
export async function openClient({
  server,
  config,
  limits: { connectTimeoutMs, listTimeoutMs, maxPages },
  signal,
  handlers,
  onDisposal,
  auth,
  elicitation = ['form'],
}: {
  /** The server's name, for errors. */
  server: string;
  /** How to reach it. */
  config: McpServerConfig;
  /** Timeouts and the page limit. */
  limits: { connectTimeoutMs: number; listTimeoutMs: number; maxPages: number };
  /** Aborts connecting (close() or the caller). */
  signal: AbortSignal;
  /** Client callbacks, installed before connecting so nothing is missed. */
  handlers: {
    onListChanged: () => void;
    onClose: () => void;
    onError: (error: Error) => void;
    /** Answers the server's `elicitation/create`. */
    onElicitation: (params: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;
  };
  /** Receives the teardown of a failed attempt. */
  onDisposal: (disposal: Promise<void>) => void;
  /** Sign-in of an HTTP server with `auth`. */
  auth?: ConnectionAuth | undefined;
  /** Elicitation modes offered to the server. */
  elicitation?: readonly ('form' | 'url')[];
}): Promise<OpenedClient> {
  const [{ Client }, { ElicitRequestSchema, ToolListChangedNotificationSchema }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
  signal.throwIfAborted();
  const transport = await createTransport({ server, config, auth });
  // A stdio child's pid, kept by the transport at start (see createTransport).
  const startedPid = () => (transport as { startedPid?: number }).startedPid;
  // Elicitation is always offered: without an app hook the answer is `decline`,
  // which tells the server at once instead of leaving it to guess.
  const client = new Client(clientInfo, {
    capabilities: {
      elicitation: {
        ...(elicitation.includes('form') ? { form: { applyDefaults: true } } : {}),
        ...(elicitation.includes('url') ? { url: {} } : {}),
      },
    },
  });
  client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
    handlers.onElicitation(request.params, extra.signal),
  );
  // The SDK's own `listChanged` option re-reads only the first page; we re-list all.
  client.setNotificationHandler(ToolListChangedNotificationSchema, handlers.onListChanged);
  client.onclose = handlers.onClose;
  client.onerror = handlers.onError;
  try {
    const link = linkSignal(signal);
    try {
      await traceMcpRequest({
        ...{ method: 'initialize', server, client },
        send: () => client.connect(transport, { timeout: connectTimeoutMs, signal: link.signal }),
      });
    } catch (error) {
      signal.throwIfAborted();
      if (isUnauthorized(error)) throw error;
      if (isRequestTimeout(error)) {
        throw new McpTimeoutError({
          server,
          operation: 'connect',
          timeoutMs: connectTimeoutMs,
          cause: error,
        });
      }
      const status = (error as { code?: unknown } | null)?.code;
      throw new McpConnectionError({
        server,
        cause: error,
        message:
          `Could not connect to MCP server "${server}": ${(error as Error)?.message ?? String(error)}. ` +
          (status === 401 || status === 403
            ? 'It requires sign-in: give it `auth` (createMcpOAuth() or an OAuthClientProvider).'
            : 'Check its command/URL, and that it starts on its own.'),
      });
    } finally {
      link.dispose();
    }
    const tools = await listAllTools({
      client,
      server,
      timeoutMs: listTimeoutMs,
      maxPages,
      abortSignal: signal,
    });
    return { client, transport, pid: startedPid(), tools };
  } catch (error) {
    // A stuck child may take seconds to die (stdin EOF, SIGTERM, SIGKILL):
    // report the failure now and let close() wait for the exit.
    onDisposal(disposeConnection({ client, transport, pid: startedPid() }));
    throw error;
  }
}
