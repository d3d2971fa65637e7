import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { McpPaginationError } from '../../errors/mcp-pagination-error.ts';
import { McpTimeoutError } from '../../errors/mcp-timeout-error.ts';
import { isRequestTimeout } from '../error-codes.ts';
import { linkSignal } from '../../util/linked-signal.ts';
import { traceMcpRequest } from '../../telemetry/mcp-telemetry.ts';

/**
 * Reads every `tools/list` page of a connected client. Stops with a
 * {@link McpPaginationError} when a cursor repeats or `maxPages` is exceeded,
 * and with a {@link McpTimeoutError} when all pages together take longer than
 * `timeoutMs`. A tool name listed twice is kept once (the first).
 *
 * @example
 * ```ts
 * const tools = await listAllTools({ client, server: 'github' });
 * ```
 */
export async function listAllTools({
  client,
  server,
  timeoutMs = 60_000,
  maxPages = 1_000,
  abortSignal,
}: {
  /** A connected MCP client. */
  client: Pick<Client, 'listTools'>;
  /** The server's name, for errors. */
  server: string;
  /** Budget for all pages together (not per page). */
  timeoutMs?: number;
  /** Pages accepted before the listing is declared endless. */
  maxPages?: number;
  /** Cancels the listing. */
  abortSignal?: AbortSignal;
}): Promise<McpTool[]> {
  const deadline = performance.now() + timeoutMs;
  const seenCursors = new Set<string>();
  const byName = new Map<string, McpTool>();
  let cursor: string | undefined;
  let pages = 0;
  do {
    abortSignal?.throwIfAborted();
    if (pages >= maxPages) {
      throw new McpPaginationError({
        server,
        reason: 'too-many-pages',
        pages,
        cursor: cursor ?? '',
      });
    }
    const remainingMs = deadline - performance.now();
    if (remainingMs <= 0) throw new McpTimeoutError({ server, operation: 'tools/list', timeoutMs });
    let page;
    const link = linkSignal(abortSignal);
    try {
      const options = { timeout: Math.ceil(remainingMs), signal: link.signal };
      page = await traceMcpRequest({
        ...{ method: 'tools/list', server, client, page: pages + 1 },
        send: meta =>
          client.listTools(
            cursor === undefined && meta === undefined
              ? undefined
              : {
                  ...(cursor === undefined ? {} : { cursor }),
                  ...(meta === undefined ? {} : { _meta: meta }),
                },
            options,
          ),
      });
    } catch (error) {
      // The SDK reports an abort as a timeout; tell them apart by our own signal.
      abortSignal?.throwIfAborted();
      if (isRequestTimeout(error)) {
        throw new McpTimeoutError({ server, operation: 'tools/list', timeoutMs, cause: error });
      }
      throw error;
    } finally {
      link.dispose();
    }
    pages++;
    for (const tool of page.tools) if (!byName.has(tool.name)) byName.set(tool.name, tool);
    cursor = page.nextCursor || undefined;
    if (cursor !== undefined) {
      if (seenCursors.has(cursor)) {
        throw new McpPaginationError({ server, reason: 'repeated-cursor', pages, cursor });
      }
      seenCursors.add(cursor);
    }
  } while (cursor !== undefined);
  return [...byName.values()];
}
