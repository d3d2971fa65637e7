import { McpConnectionError } from '../../errors/mcp-connection-error.ts';
import { McpTimeoutError } from '../../errors/mcp-timeout-error.ts';
import { McpToolError } from '../../errors/mcp-tool-error.ts';
import { isConnectionClosed, isRequestTimeout } from '../error-codes.ts';

/**
 * Classifies a failed `tools/call` (other than the caller's own abort): a
 * timeout, a lost connection (`disconnected: true`, the caller should
 * reconnect), or a JSON-RPC error from the server (unknown tool, bad
 * arguments), which is a tool failure the model should see.
 *
 * @example
 * ```ts
 * const { error, disconnected } = toCallError({ server, tool, cause, callTimeoutMs });
 * ```
 */
export function toCallError({
  server,
  tool,
  cause,
  callTimeoutMs,
}: {
  /** The server's name. */
  server: string;
  /** The tool's server-side name. */
  tool: string;
  /** What the SDK threw. */
  cause: unknown;
  /** The limit in force, for the message. */
  callTimeoutMs: number;
}): { error: Error; disconnected: boolean } {
  if (isRequestTimeout(cause)) {
    const error = new McpTimeoutError({
      server,
      operation: 'tools/call',
      timeoutMs: callTimeoutMs,
      tool,
      cause,
    });
    return { error, disconnected: false };
  }
  // JSON-RPC errors carry negative integer codes; anything else (fetch failures,
  // HTTP status errors, "Not connected") means the transport is gone.
  const code = (cause as { code?: unknown } | null)?.code;
  const fromServer = typeof code === 'number' && Number.isInteger(code) && code < 0;
  if (!fromServer || isConnectionClosed(cause)) {
    const error = new McpConnectionError({
      server,
      tool,
      cause,
      message:
        `MCP server "${server}" went away while running "${tool}" (${describe(cause)}). ` +
        'It is being reconnected; the call may be retried shortly.',
    });
    return { error, disconnected: true };
  }
  return {
    error: new McpToolError({ server, tool, message: describe(cause), content: [] }),
    disconnected: false,
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
