import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolDescriptor } from '../../retrieval/types.ts';
import { assignToolNames, type McpNaming } from './tool-names.ts';
import type { McpToolIndex } from '../types.ts';

/** A tool of a server, as one toolbox currently offers it. */
export type McpToolPair = { server: string; tool: McpTool };

type Entry = {
  server: string;
  tool: McpTool;
  /** Identity of what the model sees; a change means re-embed. */
  key: string;
  name: string;
  /** Toolboxes offering it. */
  refs: number;
  /** `key` and `name` as last written to the index. */
  indexedKey: string | undefined;
  indexedName: string | undefined;
};

const keys = new WeakMap<McpTool, string>();

/** What the model sees of a tool; cached per listed tool object (shared by every toolbox using it). */
export function toolKey(server: string, tool: McpTool): string {
  let key = keys.get(tool);
  if (key === undefined) {
    key = JSON.stringify([server, tool.name, tool.description, tool.title, tool.inputSchema]);
    keys.set(tool, key);
  }
  return key;
}

/** The (server, tool) identity used across toolboxes. */
export function pairKey(server: string, tool: string): string {
  return `${server}\u0000${tool}`;
}

/**
 * The catalog every toolbox of one `connectMcpServers()` shares (the
 * process-wide one and each `forUser()` one): final tool names, assigned over
 * all tools any toolbox offers (so a tool has the same name for every user),
 * and the tool index, holding each (server, tool) once with a count of the
 * toolboxes offering it. A second user's toolbox with the same tools adds
 * references, not embeddings; a tool leaves the index when the last toolbox
 * offering it drops it. Updates run one at a time through `run()`.
 *
 * @example
 * ```ts
 * const shared = new McpSharedCatalog({ index, naming: 'on-collision' });
 * await shared.run(async () => { shared.hold(view, pairs); await shared.syncIndex(); });
 * ```
 */
export class McpSharedCatalog {
  readonly index: McpToolIndex | undefined;
  private naming: McpNaming;
  private entries = new Map<string, Entry>();
  private held = new Map<object, Set<string>>();
  // Names indexed for entries that are gone; removed at the next syncIndex().
  private unindex = new Set<string>();
  private tail: Promise<unknown> = Promise.resolve();
  private renders = new Set<() => void>();

  constructor({
    index,
    naming = 'on-collision',
  }: {
    /** Index kept in step (optional). */
    index?: McpToolIndex | undefined;
    /** See {@link McpNaming}. */
    naming?: McpNaming;
  }) {
    this.index = index;
    this.naming = naming;
  }

  /** Runs `task` after every earlier one: syncs never interleave. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task);
    this.tail = run.catch(() => {});
    return run;
  }

  /** Registers a toolbox's re-render, called when names change under it. */
  onRename(render: () => void): () => void {
    this.renders.add(render);
    return () => this.renders.delete(render);
  }

  /**
   * Sets the tools `holder` offers now (replacing what it offered before),
   * renames on new collisions and re-renders the other holders if names
   * changed. Call inside `run()`.
   */
  hold(holder: object, pairs: ReadonlyMap<string, McpToolPair>, render: () => void): void {
    const before = this.held.get(holder) ?? new Set<string>();
    let membership = false;
    for (const [key, { server, tool }] of pairs) {
      let entry = this.entries.get(key);
      if (entry === undefined) {
        entry = {
          server,
          tool,
          key: toolKey(server, tool),
          name: '',
          refs: 0,
          indexedKey: undefined,
          indexedName: undefined,
        };
        this.entries.set(key, entry);
        membership = true;
      } else if (entry.tool !== tool) {
        // The latest listing wins; a changed definition is re-embedded once.
        entry.tool = tool;
        entry.key = toolKey(server, tool);
      }
      if (!before.has(key)) entry.refs++;
    }
    for (const key of before) {
      if (pairs.has(key)) continue;
      const entry = this.entries.get(key)!;
      if (--entry.refs > 0) continue;
      this.entries.delete(key);
      if (entry.indexedName !== undefined) this.unindex.add(entry.indexedName);
      membership = true;
    }
    if (pairs.size === 0) this.held.delete(holder);
    else this.held.set(holder, new Set(pairs.keys()));
    if (membership && this.rename()) {
      for (const other of this.renders) if (other !== render) other();
    }
  }

  /** The final name of a held tool. */
  nameOf(key: string): string {
    return this.entries.get(key)!.name;
  }

  /** Writes changed and new tools to the index and removes dropped ones; returns how many were upserted. */
  async syncIndex(abortSignal?: AbortSignal): Promise<number> {
    const index = this.index;
    if (index === undefined) return 0;
    const live = new Set<string>();
    for (const entry of this.entries.values()) live.add(entry.name);
    const removals = new Set([...this.unindex].filter(name => !live.has(name)));
    for (const entry of this.entries.values()) {
      if (entry.indexedName !== undefined && entry.indexedName !== entry.name)
        if (!live.has(entry.indexedName)) removals.add(entry.indexedName);
    }
    this.unindex.clear();
    if (removals.size > 0) index.remove([...removals]);
    const indexed = new Set(index.names());
    // Compared against what was last indexed, so a failed upsert (embedder
    // down) is retried by the next sync.
    const stale = [...this.entries.values()].filter(
      entry =>
        entry.indexedKey !== entry.key ||
        entry.indexedName !== entry.name ||
        !indexed.has(entry.name),
    );
    if (stale.length === 0) return 0;
    await index.upsert(
      stale.map(entry => descriptorOf(entry)),
      abortSignal === undefined ? {} : { abortSignal },
    );
    for (const entry of stale) {
      entry.indexedKey = entry.key;
      entry.indexedName = entry.name;
    }
    return stale.length;
  }

  // Names depend only on the set of (server, tool) pairs, never on which user
  // holds them; true when an existing entry's name changed.
  private rename(): boolean {
    const entries = [...this.entries.values()];
    const names = assignToolNames({
      tools: entries.map(entry => ({ server: entry.server, name: entry.tool.name })),
      naming: this.naming,
    });
    let renamed = false;
    entries.forEach((entry, i) => {
      if (entry.name !== '' && entry.name !== names[i]) renamed = true;
      entry.name = names[i]!;
    });
    return renamed;
  }
}

function descriptorOf(entry: Entry): ToolDescriptor {
  const { tool } = entry;
  return {
    name: entry.name,
    server: entry.server,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    ...(tool.inputSchema === undefined ? {} : { inputSchema: tool.inputSchema }),
  };
}
