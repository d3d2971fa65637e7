import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltMcpTimeoutError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/** What was being waited for when an MCP timeout fired. */
export type McpOperation = 'connect' | 'tools/list' | 'tools/call';

const optionOf: Record<McpOperation, string> = {
  connect: 'connectTimeoutMs',
  'tools/list': 'listTimeoutMs',
  'tools/call': 'callTimeoutMs',
};

/**
 * An MCP server did not answer in time: connecting (`connectTimeoutMs`),
 * listing its tools (`listTimeoutMs`) or running a tool (`callTimeoutMs`).
 *
 * @example
 * ```ts
 * if (McpTimeoutError.isInstance(error)) console.error(error.operation, error.timeoutMs);
 * ```
 */
export class McpTimeoutError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The server's name. */
  readonly server: string;
  /** What timed out. */
  readonly operation: McpOperation;
  /** The limit that was exceeded. */
  readonly timeoutMs: number;
  /** The tool, for `tools/call`. */
  readonly tool: string | undefined;

  constructor({
    server,
    operation,
    timeoutMs,
    tool,
    cause,
  }: {
    server: string;
    operation: McpOperation;
    timeoutMs: number;
    tool?: string;
    cause?: unknown;
  }) {
    const what = tool === undefined ? operation : `${operation} "${tool}"`;
    super({
      name,
      message:
        `MCP server "${server}" did not finish ${what} within ${timeoutMs} ms. ` +
        `If it is legitimately slow, raise \`${optionOf[operation]}\`.`,
      cause,
    });
    this.server = server;
    this.operation = operation;
    this.timeoutMs = timeoutMs;
    this.tool = tool;
  }

  static override isInstance(error: unknown): error is McpTimeoutError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
