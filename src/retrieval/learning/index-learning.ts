import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import type { RetrievalChannels } from '../ranking/retrieval-channels.ts';
import { describeRequest } from './describe-request.ts';
import { checkSearchArguments } from '../search-arguments.ts';
import type { ToolLearning } from './tool-learning.ts';
import type { ToolUsage } from './usage-record.ts';
import { usageBag } from './usage-signals.ts';

type LearnArguments = { query: string; tool: string; abortSignal?: AbortSignal | undefined };

/**
 * A tool index's learning from use (`learn`, `forget`, `usage`, `syncUsage` of `ToolIndex`):
 * what `ToolLearning` keeps (shared through its store), mixed into the index's channels slot by
 * slot. Without `learning`, reads find nothing and `learn` / `forget` refuse.
 *
 * @example
 * ```ts
 * const usage = new IndexLearning({ learning, channels, slotOf, names, changed });
 * await usage.learn({ query: 'weather in Paris', tool: 'get_weather' });
 * ```
 */
export class IndexLearning {
  readonly learning: ToolLearning | undefined;
  private readonly channels: RetrievalChannels;
  private readonly slotOf: (name: string) => number | undefined;
  private readonly names: () => string[];
  private readonly changed: () => void;
  private lastSync = Date.now();

  constructor(options: {
    /** What is learned; undefined for an index that does not learn. */
    learning: ToolLearning | undefined;
    /** The index's channels, which hold the usage fields and vectors. */
    channels: RetrievalChannels;
    /** The slot of an indexed tool. */
    slotOf: (name: string) => number | undefined;
    /** The indexed tools' names. */
    names: () => string[];
    /** Called when learned usage changed the index (its version moves). */
    changed: () => void;
  }) {
    this.learning = options.learning;
    this.channels = options.channels;
    this.slotOf = options.slotOf;
    this.names = options.names;
    this.changed = options.changed;
  }

  /** See `ToolIndex.learn`. */
  async learn({ query, tool, abortSignal }: LearnArguments): Promise<boolean> {
    const learning = this.learningOrThrow();
    checkSearchArguments({ query, topK: 1, mode: 'multi' });
    const slot = this.slotOf(tool);
    if (slot === undefined)
      throw new InvalidArgumentError({
        argument: 'tool',
        value: tool,
        message: 'not in the index',
      });
    const request = await describeRequest({ channels: this.channels, query, slot, abortSignal });
    if (request === undefined) return false;
    await learning.add({ name: tool, ...request });
    this.apply(tool);
    this.changed();
    return true;
  }

  /** See `ToolIndex.forget`. */
  async forget(tools: string | readonly string[]): Promise<void> {
    const learning = this.learningOrThrow();
    for (const name of typeof tools === 'string' ? [tools] : tools) {
      await learning.forget(name);
      this.apply(name);
    }
    this.changed();
  }

  /** See `ToolIndex.usage`. */
  usage(tool: string): Readonly<ToolUsage> | undefined {
    const usage = this.learning?.get(tool);
    return usage && usage.requests.length > 0 ? usage : undefined;
  }

  /** See `ToolIndex.syncUsage`. */
  async sync(abortSignal?: AbortSignal): Promise<number> {
    const changed = (await this.learning?.load(this.names(), abortSignal)) ?? [];
    for (const name of changed) this.apply(name);
    if (changed.length > 0) this.changed();
    return changed.length;
  }

  /** Starts a sync in the background when `syncEveryMs` has passed since the last one. */
  syncWhenDue(): void {
    const every = this.learning?.syncEveryMs ?? 0;
    if (every <= 0 || Date.now() - this.lastSync < every) return;
    this.lastSync = Date.now();
    void this.sync().catch(() => {}); // store failures are reported as learning events
  }

  /** Mixes what was learned about `name` into its slot (`slot` when known), if it is indexed. */
  apply(name: string, slot = this.slotOf(name)): void {
    if (slot === undefined) return;
    const usage = this.learning?.get(name);
    const learned = usage?.vector;
    this.channels.applyUsage(slot, {
      ...usageBag(usage),
      // Only a vector of this index's model means anything next to its description vectors.
      vector:
        learned !== undefined &&
        (usage?.requests.length ?? 0) > 0 &&
        learned.modelId === this.channels.embedder?.id
          ? learned.values
          : undefined,
      vectorWeight: this.learning?.vectorWeight ?? 0,
      requests: usage?.requests.length ?? 0,
    });
  }

  /** Like `apply`, for a tool with learned usage only (a new or re-read vector of its slot). */
  applyIfLearned(name: string, slot: number): void {
    if (this.learning?.get(name)) this.apply(name, slot);
  }

  private learningOrThrow(): ToolLearning {
    if (this.learning === undefined) {
      throw new InvalidArgumentError({
        argument: 'learning',
        value: undefined,
        message: 'this index does not learn; create it with createToolIndex({ learning: true })',
      });
    }
    return this.learning;
  }
}
