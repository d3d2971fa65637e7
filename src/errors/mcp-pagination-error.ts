import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltMcpPaginationError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * Paging through an MCP server's `tools/list` did not end: the server sent a
 * cursor it had already sent (it would loop forever), or more pages than
 * `maxPages`.
 *
 * @example
 * ```ts
 * if (McpPaginationError.isInstance(error)) console.error(error.server, error.reason);
 * ```
 */
export class McpPaginationError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The server's name. */
  readonly server: string;
  /** Why paging stopped. */
  readonly reason: 'repeated-cursor' | 'too-many-pages';
  /** Pages read before stopping. */
  readonly pages: number;
  /** The offending cursor (the repeated one, or the last one). */
  readonly cursor: string;

  constructor({
    server,
    reason,
    pages,
    cursor,
  }: {
    server: string;
    reason: 'repeated-cursor' | 'too-many-pages';
    pages: number;
    cursor: string;
  }) {
    super({
      name,
      message:
        reason === 'repeated-cursor'
          ? `MCP server "${server}" repeated the tools/list cursor "${cursor}" after ${pages} pages; ` +
            'its paging never advances. Fix the server, or report the bug to its authors.'
          : `MCP server "${server}" was still paging tools/list after ${pages} pages (\`maxPages\`). ` +
            'Raise `maxPages` if it really has that many tools; otherwise its paging never ends.',
    });
    this.server = server;
    this.reason = reason;
    this.pages = pages;
    this.cursor = cursor;
  }

  static override isInstance(error: unknown): error is McpPaginationError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
