import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltMcpToolError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * An MCP tool ran and reported failure (`isError: true` in its result). It is
 * thrown from the tool's `execute` so the AI SDK hands the model a tool error;
 * `toString()` is the server's own text, so that is exactly what the model
 * reads (no class-name prefix).
 *
 * @example
 * ```ts
 * if (McpToolError.isInstance(error)) console.error(error.server, error.tool, error.content);
 * ```
 */
export class McpToolError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The server's name. */
  readonly server: string;
  /** The tool's name as the server knows it. */
  readonly tool: string;
  /** The result's content blocks, unmodified. */
  readonly content: unknown[];

  constructor({
    server,
    tool,
    message,
    content,
  }: {
    server: string;
    tool: string;
    message: string;
    content: unknown[];
  }) {
    super({ name, message });
    this.server = server;
    this.tool = tool;
    this.content = content;
  }

  // The AI SDK sends `String(error)` to the model; keep it to the server's words.
  override toString(): string {
    return this.message;
  }

  static override isInstance(error: unknown): error is McpToolError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
