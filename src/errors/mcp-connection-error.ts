import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltMcpConnectionError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * An MCP server could not be reached: it failed to start or connect, it
 * crashed or disconnected (possibly during a tool call), it is reconnecting,
 * or the toolbox was closed.
 *
 * @example
 * ```ts
 * if (McpConnectionError.isInstance(error)) console.error(error.server, error.message);
 * ```
 */
export class McpConnectionError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The server's name (its key in `connectMcpServers({ servers })`). */
  readonly server: string;
  /** The tool whose call failed, when the error came from a call. */
  readonly tool: string | undefined;

  constructor({
    server,
    tool,
    message,
    cause,
  }: {
    server: string;
    tool?: string;
    message: string;
    cause?: unknown;
  }) {
    super({ name, message, cause });
    this.server = server;
    this.tool = tool;
  }

  static override isInstance(error: unknown): error is McpConnectionError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
