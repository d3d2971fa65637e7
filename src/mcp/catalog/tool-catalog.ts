// catalog/: the servers' tools as one AI SDK ToolSet and index: every tools/list page, re-listing
// after list_changed, collision-free names, and the entries per-user toolboxes share.
import type { Tool, ToolSet } from 'ai';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { createMcpTool } from './create-mcp-tool.ts';
import { McpSharedCatalog, type McpToolPair, pairKey, toolKey } from './shared-tool-catalog.ts';
import type { McpCallResult } from '../calls/to-model-output.ts';
import type { McpNaming } from './tool-names.ts';
import type { McpEvent, McpSyncResult, McpToolIndex } from '../types.ts';

type Entry = {
  /** Which server tool, and what the model sees of it; a change means a new AI SDK tool. */
  pair: string;
  key: string;
  tool: Tool;
};

/** One server's current tools, as the catalog reads them. */
export type McpToolSource = { name: string; tools: readonly McpTool[] };

/** Sends a call to a server. */
type Call = (
  server: string,
  tool: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
  toolCallId?: string,
) => Promise<McpCallResult>;

/**
 * One toolbox's view of the tools: one AI SDK `ToolSet` (a single object
 * updated in place, so references handed out stay current; existing keys
 * keep their order) over its servers, named and indexed through the
 * {@link McpSharedCatalog} it shares with the other toolboxes of the same
 * `connectMcpServers()` (per-user ones). A burst of sync requests while one
 * runs collapses into one more. Internal to `connectMcpServers`.
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
  readonly shared: McpSharedCatalog;
  private entries = new Map<string, Entry>();
  private pairs = new Map<string, McpToolPair>();
  private sources: () => readonly McpToolSource[];
  private call: Call;
  private onEvent: (event: McpEvent) => void;
  private queued: Promise<McpSyncResult> | undefined;
  private render = () => void this.renderTools();
  private unsubscribe: () => void;

  constructor(options: {
    /** Reads the servers' current tool lists. */
    sources: () => readonly McpToolSource[];
    /** Sends a call to a server. */
    call: Call;
    /** The catalog shared with other toolboxes; a new one (with `index`, `naming`) otherwise. */
    shared?: McpSharedCatalog;
    /** Index kept in step (optional; only for a new shared catalog). */
    index?: McpToolIndex | undefined;
    /** See {@link McpNaming} (only for a new shared catalog). */
    naming?: McpNaming;
    /** Receives a `synced` event per sync. */
    onEvent?: (event: McpEvent) => void;
  }) {
    this.sources = options.sources;
    this.call = options.call;
    this.shared =
      options.shared ??
      new McpSharedCatalog({
        index: options.index,
        ...(options.naming === undefined ? {} : { naming: options.naming }),
      });
    this.onEvent = options.onEvent ?? (() => {});
    this.unsubscribe = this.shared.onRename(this.render);
  }

  /** Names this catalog offers (never touches other tools in a shared index). */
  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Brings tools and index up to date with the sources. */
  sync(abortSignal?: AbortSignal): Promise<McpSyncResult> {
    if (this.queued !== undefined) return this.queued;
    const run = this.shared.run(() => {
      this.queued = undefined;
      return this.syncNow(abortSignal);
    });
    this.queued = run;
    return run;
  }

  /** Offers nothing any more and lets go of its share of the index. */
  async release(): Promise<void> {
    this.sources = () => [];
    await this.sync().catch(() => {});
    this.unsubscribe();
  }

  private async syncNow(abortSignal: AbortSignal | undefined): Promise<McpSyncResult> {
    const started = performance.now();
    const pairs = new Map<string, McpToolPair>();
    for (const source of this.sources()) {
      for (const tool of source.tools)
        pairs.set(pairKey(source.name, tool.name), {
          server: source.name,
          tool,
        });
    }
    this.pairs = pairs;
    this.shared.hold(this, pairs, this.render);
    const { added, updated, removed } = this.renderTools();
    const upserted = await this.shared.syncIndex(abortSignal);
    const result: McpSyncResult = {
      added,
      updated,
      removed,
      unchanged: this.entries.size - added.length - updated.length,
      upserted,
      durationMs: performance.now() - started,
    };
    this.onEvent({ type: 'synced', ...result });
    return result;
  }

  private renderTools(): { added: string[]; updated: string[]; removed: string[] } {
    const next = new Map<string, Entry>();
    const added: string[] = [];
    const updated: string[] = [];
    for (const [pair, { server, tool }] of this.pairs) {
      const name = this.shared.nameOf(pair);
      const key = toolKey(server, tool);
      const previous = this.entries.get(name);
      if (previous?.key === key && previous.pair === pair) {
        next.set(name, previous);
        continue;
      }
      (previous === undefined ? added : updated).push(name);
      next.set(name, {
        pair,
        key,
        tool: createMcpTool({
          server,
          tool,
          call: (raw, args, signal, toolCallId) => this.call(server, raw, args, signal, toolCallId),
        }),
      });
    }
    const removed = [...this.entries.keys()].filter(name => !next.has(name));
    this.entries = next;
    for (const name of removed) delete this.tools[name];
    for (const [name, entry] of next) this.tools[name] = entry.tool;
    return { added, updated, removed };
  }
}
