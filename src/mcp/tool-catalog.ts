import type { Tool, ToolSet } from 'ai';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolDescriptor } from '../retrieval/types.ts';
import { createMcpTool } from './create-mcp-tool.ts';
import type { McpCallResult } from './to-model-output.ts';
import { assignToolNames, type McpNaming } from './tool-names.ts';
import type { McpEvent, McpSyncResult, McpToolIndex } from './types.ts';

type Entry = {
  /** Identity of what the model sees; a change means re-create and re-embed. */
  key: string;
  tool: Tool;
  descriptor: ToolDescriptor;
  /** `key` as last written to the index; differs while the index is stale. */
  indexedKey: string | undefined;
};

/** One server's current tools, as the catalog reads them. */
export type McpToolSource = { name: string; tools: readonly McpTool[] };

/**
 * The merged view of every server's tools: one AI SDK `ToolSet` (a single
 * object updated in place, so references handed out stay current; existing
 * keys keep their order) and the tool index, updated incrementally. Syncs run
 * one at a time, and a burst of requests while one runs collapses into one
 * more. Internal to `connectMcpServers`.
 *
 * @example
 * ```ts
 * const catalog = new McpToolCatalog({ sources: () => connections, call, index });
 * await catalog.sync();
 * ```
 */
export class McpToolCatalog {
  /** The live ToolSet. */
  readonly tools: ToolSet = {};
  #entries = new Map<string, Entry>();
  #sources: () => readonly McpToolSource[];
  #call: (
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ) => Promise<McpCallResult>;
  #index: McpToolIndex | undefined;
  #naming: McpNaming;
  #onEvent: (event: McpEvent) => void;
  #tail: Promise<unknown> = Promise.resolve();
  #queued: Promise<McpSyncResult> | undefined;

  constructor(options: {
    /** Reads the servers' current tool lists. */
    sources: () => readonly McpToolSource[];
    /** Sends a call to a server. */
    call: (
      server: string,
      tool: string,
      args: Record<string, unknown>,
      signal?: AbortSignal,
    ) => Promise<McpCallResult>;
    /** Index kept in step with the tools (optional). */
    index?: McpToolIndex | undefined;
    /** See {@link McpNaming}. */
    naming?: McpNaming;
    /** Receives a `synced` event per sync. */
    onEvent?: (event: McpEvent) => void;
  }) {
    this.#sources = options.sources;
    this.#call = options.call;
    this.#index = options.index;
    this.#naming = options.naming ?? 'on-collision';
    this.#onEvent = options.onEvent ?? (() => {});
  }

  /** Names this catalog owns (never touches other tools in a shared index). */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /** Brings tools and index up to date with the sources. */
  sync(abortSignal?: AbortSignal): Promise<McpSyncResult> {
    if (this.#queued !== undefined) return this.#queued;
    const run = this.#tail.then(() => {
      this.#queued = undefined;
      return this.#syncNow(abortSignal);
    });
    this.#queued = run;
    this.#tail = run.catch(() => {});
    return run;
  }

  async #syncNow(abortSignal: AbortSignal | undefined): Promise<McpSyncResult> {
    const started = performance.now();
    const pairs = this.#sources().flatMap(source =>
      source.tools.map(tool => ({ server: source.name, tool })),
    );
    const names = assignToolNames({
      tools: pairs.map(({ server, tool }) => ({ server, name: tool.name })),
      naming: this.#naming,
    });
    const next = new Map<string, Entry>();
    const added: string[] = [];
    const updated: string[] = [];
    pairs.forEach(({ server, tool }, i) => {
      const name = names[i]!;
      const key = JSON.stringify([
        server,
        tool.name,
        tool.description,
        tool.title,
        tool.inputSchema,
      ]);
      const previous = this.#entries.get(name);
      if (previous?.key === key) {
        next.set(name, previous);
        return;
      }
      (previous === undefined ? added : updated).push(name);
      next.set(name, {
        key,
        indexedKey: undefined,
        tool: createMcpTool({
          server,
          tool,
          call: (raw, args, signal) => this.#call(server, raw, args, signal),
        }),
        descriptor: {
          name,
          server,
          ...(tool.description === undefined ? {} : { description: tool.description }),
          ...(tool.inputSchema === undefined ? {} : { inputSchema: tool.inputSchema }),
        },
      });
    });
    const removed = [...this.#entries.keys()].filter(name => !next.has(name));
    this.#entries = next;
    for (const name of removed) delete this.tools[name];
    for (const [name, entry] of next) this.tools[name] = entry.tool;

    let upserted = 0;
    if (this.#index !== undefined) {
      if (removed.length > 0) this.#index.remove(removed);
      const indexed = new Set(this.#index.names());
      // Compare against what was last indexed, not the previous sync: a failed
      // upsert (embedder down) is retried by the next sync.
      const stale = [...next.values()].filter(
        entry => entry.indexedKey !== entry.key || !indexed.has(entry.descriptor.name),
      );
      if (stale.length > 0) {
        await this.#index.upsert(
          stale.map(entry => entry.descriptor),
          abortSignal === undefined ? {} : { abortSignal },
        );
        for (const entry of stale) entry.indexedKey = entry.key;
        upserted = stale.length;
      }
    }
    const result: McpSyncResult = {
      added,
      updated,
      removed,
      unchanged: next.size - added.length - updated.length,
      upserted,
      durationMs: performance.now() - started,
    };
    this.#onEvent({ type: 'synced', ...result });
    return result;
  }
}
