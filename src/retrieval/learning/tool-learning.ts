// learning/: learning from use: which requests each tool served, kept in the store and mixed into
// both channels (or ranked as channels of its own, see `FusionOptions.learnedUsage`).
import type { Storage } from 'unstorage';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { StoreError } from '../../errors/store-error.ts';
import { encodeBase64Url } from '../../util/base64.ts';
import { type EmbeddingBacking, storeBacking } from '../store/embedding-backing.ts';
import { type ToolUsage, decodeUsageRecord, encodeUsageRecord } from './usage-record.ts';
import { storeGuard } from '../store/store-guard.ts';

const utf8 = new TextEncoder();

/** What learning reports; nothing here fails the caller's request. */
export type LearningEvent =
  /** A request was learned for `tool`, which now remembers `requests` of them. */
  | { type: 'learned'; tool: string; requests: number }
  /** A stored record was not used (corrupt, or not ours); it is overwritten by the next `learn`. */
  | { type: 'invalid-entry'; key: string; reason: string }
  /** The store failed or timed out; learning goes on in memory, the store rests for `retryAfterMs`. */
  | { type: 'store-error'; error: StoreError };

/** Options of learning from use: `createToolIndex({ learning: true | LearningOptions })`. */
export type LearningOptions = {
  /**
   * Where learned usage is shared by every process and replica: an unstorage
   * `Storage`. Defaults to the index's `store`; in memory without one.
   */
  store?: Storage;
  /** Key prefix in the store; a tool's key is `<prefix>:<tool name>`. */
  prefix?: string;
  /** Requests remembered per tool; the oldest are dropped first. */
  maxRequestsPerTool?: number;
  /** Also keep each request's text (by default only its index terms are kept). */
  keepText?: boolean;
  /**
   * Weight of the usage vector: against the description's (1) where it is mixed into a learned
   * tool's dense vector (dense retrieval, `learnedUsage.vector: 'mixed'`); a factor on its
   * scores where it is scored on its own (hybrid `zscore`, the default, and `confidence`). 0 turns
   * it off.
   */
  vectorWeight?: number;
  /** How often searches pick up what other replicas learned; 0: only at upsert and learn. */
  syncEveryMs?: number;
  /** Longest wait for one store operation. */
  timeoutMs?: number;
  /** After a store failure, how long to leave the store alone. */
  retryAfterMs?: number;
  /** Learned requests, rejected records and store failures, for logs and metrics. */
  onEvent?: (event: LearningEvent) => void;
};

/** The default key prefix of learned usage in a shared store. */
export const USAGE_STORE_PREFIX = 'ai-toolbelt:usage';

/**
 * Learned usage per tool: kept in memory for indexed tools, and in a shared
 * store when there is one, so replicas learn from each other. A learn reads the
 * tool's stored record first and merges into it.
 */
export class ToolLearning {
  readonly maxRequests: number;
  readonly keepText: boolean;
  readonly vectorWeight: number;
  readonly syncEveryMs: number;
  private readonly backing: EmbeddingBacking | undefined;
  private readonly prefix: string;
  private readonly guarded: ReturnType<typeof storeGuard<EmbeddingBacking, StoreError>>;
  private readonly onEvent: (event: LearningEvent) => void;
  private readonly usages = new Map<string, ToolUsage>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor({
    store,
    prefix = USAGE_STORE_PREFIX,
    maxRequestsPerTool = 50,
    keepText = false,
    vectorWeight = 1,
    syncEveryMs = 60_000,
    timeoutMs = 5_000,
    retryAfterMs = 30_000,
    onEvent = () => {},
  }: LearningOptions = {}) {
    if (!Number.isInteger(maxRequestsPerTool) || maxRequestsPerTool < 1) {
      throw new InvalidArgumentError({
        argument: 'learning.maxRequestsPerTool',
        value: maxRequestsPerTool,
        message: 'expected a positive integer',
      });
    }
    if (!(vectorWeight >= 0 && Number.isFinite(vectorWeight))) {
      throw new InvalidArgumentError({
        argument: 'learning.vectorWeight',
        value: vectorWeight,
        message: 'expected a finite number >= 0',
      });
    }
    if (
      store !== undefined &&
      (typeof store !== 'object' || typeof store.getItems !== 'function')
    ) {
      throw new InvalidArgumentError({
        argument: 'learning.store',
        value: store,
        message: 'expected an unstorage Storage (createStorage({ driver }))',
      });
    }
    this.maxRequests = maxRequestsPerTool;
    this.keepText = keepText;
    this.vectorWeight = vectorWeight;
    this.syncEveryMs = store ? syncEveryMs : 0;
    this.backing = store ? storeBacking({ storage: store, ttlSeconds: undefined }) : undefined;
    this.prefix = prefix.replace(/[/\\]/g, ':').replace(/:+$/, '');
    this.onEvent = onEvent;
    this.guarded = storeGuard({
      backing: this.backing,
      timeoutMs,
      retryAfterMs,
      toError: failure => new StoreError({ ...failure, records: 'usage' }),
      isError: StoreError.isInstance,
      onError: error => this.report({ type: 'store-error', error }),
    });
  }

  /** Whether learned usage is shared through a store. */
  get shared(): boolean {
    return this.backing !== undefined;
  }

  get(name: string): ToolUsage | undefined {
    return this.usages.get(name);
  }

  /** Names with learned usage in memory. */
  names(): string[] {
    return [...this.usages.keys()];
  }

  /** The store key of a tool: names outside `[\w.-]` are base64url-encoded behind `~`. */
  key(name: string): string {
    const safe = /^[\w.-]+$/.test(name) ? name : `~${encodeBase64Url(utf8.encode(name))}`;
    return `${this.prefix}:${safe}`;
  }

  /**
   * Reads the stored usage of `names` into memory; returns the tools whose
   * usage changed (new, or newer than what was in memory).
   */
  async load(names: readonly string[], abortSignal?: AbortSignal): Promise<string[]> {
    if (this.backing === undefined || names.length === 0) return [];
    const values = await this.guarded(
      'read',
      b => b.read(names.map(n => this.key(n))),
      abortSignal,
    );
    if (values === undefined) return [];
    const changed: string[] = [];
    values.forEach((value, i) => {
      const name = names[i] as string;
      const usage = this.decode(name, value);
      if (usage === undefined) return;
      if ((this.usages.get(name)?.updatedAt ?? -1) >= usage.updatedAt) return;
      this.usages.set(name, usage);
      changed.push(name);
    });
    return changed;
  }

  /** Adds one request to a tool's usage (merged into the stored record) and stores it. */
  async add({
    name,
    terms,
    text,
    vector,
  }: {
    /** The tool that served the request. */
    name: string;
    /** The request's index terms. */
    terms: readonly string[];
    /** The request's text; kept only with `keepText`. */
    text: string;
    /** The request's embedding (normalised), when the index has a model. */
    vector?: { modelId: string; values: Float32Array };
  }): Promise<ToolUsage> {
    return this.serial(name, async () => {
      if (this.backing !== undefined) await this.load([name]);
      const before = this.usages.get(name);
      const requests = [...(before?.requests ?? []), [...terms]].slice(-this.maxRequests);
      const usage: ToolUsage = {
        requests,
        updatedAt: Math.max(Date.now(), (before?.updatedAt ?? 0) + 1),
      };
      if (this.keepText) usage.texts = [...(before?.texts ?? []), text].slice(-this.maxRequests);
      const mean = vector ? runningMean(before?.vector, vector, this.maxRequests) : before?.vector;
      if (mean) usage.vector = mean;
      this.usages.set(name, usage);
      const record = encodeUsageRecord(usage);
      await this.guarded('write', b => b.write([{ key: this.key(name), record }]));
      this.report({ type: 'learned', tool: name, requests: requests.length });
      return usage;
    });
  }

  /**
   * Drops what was learned about a tool. The store keeps an empty record (a
   * tombstone) rather than no key, so replicas that learned it before see the
   * newer, empty record on their next sync and drop it too.
   */
  async forget(name: string): Promise<boolean> {
    return this.serial(name, async () => {
      const had = (this.usages.get(name)?.requests.length ?? 0) > 0;
      const before = this.usages.get(name)?.updatedAt ?? 0;
      const usage: ToolUsage = { requests: [], updatedAt: Math.max(Date.now(), before + 1) };
      this.usages.set(name, usage);
      const record = encodeUsageRecord(usage);
      await this.guarded('write', b => b.write([{ key: this.key(name), record }]));
      return had;
    });
  }

  /** Drops a tool's usage from memory only (the tool left the index; the store keeps it). */
  evict(name: string): void {
    this.usages.delete(name);
  }

  private decode(name: string, value: unknown): ToolUsage | undefined {
    if (value === undefined || value === null) return undefined;
    const decoded = decodeUsageRecord(value, { maxRequests: this.maxRequests });
    if ('usage' in decoded) return decoded.usage;
    this.report({ type: 'invalid-entry', key: this.key(name), reason: decoded.invalid });
    return undefined;
  }

  // One learn or forget per tool at a time, so concurrent learns in one process never lose a request.
  private serial<T>(name: string, run: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(name) ?? Promise.resolve();
    const next = previous.then(run, run);
    const settled = next.catch(() => {});
    this.queues.set(name, settled);
    void settled.then(() => {
      if (this.queues.get(name) === settled) this.queues.delete(name);
    });
    return next;
  }

  private report(event: LearningEvent): void {
    try {
      this.onEvent(event);
    } catch {
      // A throwing listener must not fail a search or a learn.
    }
  }
}

/**
 * The mean of the learned requests' vectors. Once `max` requests are counted it
 * becomes a moving average, so old traffic fades as the record's requests do.
 * A vector of another model or length starts the mean afresh.
 */
function runningMean(
  previous: ToolUsage['vector'],
  { modelId, values }: { modelId: string; values: Float32Array },
  max: number,
): NonNullable<ToolUsage['vector']> {
  if (
    previous === undefined ||
    previous.modelId !== modelId ||
    previous.values.length !== values.length
  )
    return { modelId, count: 1, values: Float32Array.from(values) };
  const count = Math.min(previous.count + 1, max);
  const mean = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const old = previous.values[i] as number;
    mean[i] = old + ((values[i] as number) - old) / count;
  }
  return { modelId, count, values: mean };
}
