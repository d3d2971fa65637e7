import type { SealedStoreStorage, SealingSecret } from '../../util/sealing/sealed-store.ts';
import { sealingKeys } from '../../util/sealing/sealing-keys.ts';
import { checkMinimums } from '../../util/check-minimums.ts';
import type { RedisScriptClient } from '../../util/redis/redis-store-client.ts';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';

/**
 * Options of conversation interpreters (`DockerSandbox`'s `conversations`): one long-lived
 * Python interpreter per conversation, reachable from every replica that shares `store` and
 * the engines, and restored by re-running the conversation's earlier cells when it is lost.
 *
 * @example
 * ```ts
 * const sandbox = new DockerSandbox({
 *   conversations: { store: createStorage({ driver: redisDriver({ url }) }), encryptionKey: process.env.SANDBOX_KEY },
 * });
 * ```
 */
export type ConversationOptions = {
  /**
   * Where interpreter handles (engine, container, secret, owner) and the history kept for
   * restoring (cells' code and input files) live: any unstorage `Storage`. Replicas that share
   * it (and the engines) continue each other's conversations. Default: this process's memory.
   */
  store?: SealedStoreStorage;
  /**
   * Seals handles and history in `store` (AES-256-GCM): a secret of at least 32 bytes, or a
   * list for rotation (the first writes, all read). Required with a store that outlives the
   * process (it holds the users' code and files); `false` stores them as plain JSON (warned
   * once), which you must then protect.
   */
  encryptionKey?: SealingSecret | readonly SealingSecret[] | false;
  /**
   * A Redis client (`ioredis`, or anything with its `eval`) where replicas reserve interpreters
   * atomically, so together they never pass `maxInterpreters`, `maxPerEngine` or `maxPerUser`.
   * Default: the client of `store` when it is unstorage's redis driver. Without either, each
   * replica counts by itself and replicas placing at the same instant can pass the bounds.
   * Give it with the `store` the replicas share (users are told apart by its id key).
   */
  redis?: RedisScriptClient;
  /** An interpreter with no cell for this long ends (its state is restored when the conversation goes on). */
  idleMs?: number;
  /** Hard bound of an interpreter container's life. */
  maxLifeMs?: number;
  /** How long a conversation's history is kept for restoring after its last cell. */
  historyTtlMs?: number;
  /** Bytes of cell code and input files kept per conversation for restoring; the oldest cells go first. */
  maxHistoryBytes?: number;
  /**
   * Conversations with history kept per user; past it the user's least recently used
   * conversation's history goes (and its interpreter). Chat ids come from clients: this bounds them.
   */
  maxConversationsPerUser?: number;
  /** Bytes of history kept per user over all their conversations (at least `maxHistoryBytes`); past it, as above. */
  maxUserHistoryBytes?: number;
  /**
   * Bytes the default in-memory store holds over all users (the least recently written records
   * go first). Ignored with `store`, whose own limits apply.
   */
  memoryStoreBytes?: number;
  /** Bound of one restore: earlier cells that could run past it are not re-run (the restore says which). */
  replayDeadlineMs?: number;
  /** Cells of one conversation waiting behind the running one in this process; past it new ones are refused busy. */
  maxQueuedCells?: number;
  /** Live interpreters on all engines together (every replica's); past it new ones are refused. */
  maxInterpreters?: number;
  /** Live interpreters per engine; past it the least recently used idle one is evicted. */
  maxPerEngine?: number;
  /** Live interpreters per user; past it the user's least recently used one is evicted. */
  maxPerUser?: number;
  /**
   * Interpreters kept started (pre-imports done) per engine, waiting for a new conversation, so
   * its first cell skips the start (seconds under gVisor). They count toward the bounds.
   */
  warmPoolSize?: number;
  /** Memory limit of each interpreter, bytes (its variables live there; /tmp counts too). */
  memoryBytes?: number;
  /** Size of each interpreter's /tmp, MiB (input files, outputs). */
  tmpfsMiB?: number;
  /** pids limit of each interpreter (gVisor's own threads grow over a long life). */
  pidsLimit?: number;
  /** Deadline for a new interpreter to finish its pre-imports. */
  startTimeoutMs?: number;
  /**
   * Interpreters starting at once in this process (each start takes seconds of CPU under
   * gVisor); further placements wait for a start slot, holding their room.
   */
  maxConcurrentStarts?: number;
};

/** `ConversationOptions` with defaults filled in. */
export type ResolvedConversationOptions = Required<
  Omit<ConversationOptions, 'store' | 'encryptionKey' | 'redis'>
> &
  Pick<ConversationOptions, 'store' | 'redis'> & { keys: readonly SealingSecret[] };

/** Fills in defaults and checks ranges (`InvalidArgumentError` naming the option). */
export function resolveConversationOptions({
  store,
  encryptionKey,
  redis,
  idleMs = 600_000,
  maxLifeMs = 4 * 3_600_000,
  historyTtlMs = 24 * 3_600_000,
  maxHistoryBytes = 16 * 1024 * 1024,
  maxConversationsPerUser = 20,
  maxUserHistoryBytes = 64 * 1024 * 1024,
  memoryStoreBytes = 256 * 1024 * 1024,
  replayDeadlineMs = 120_000,
  maxQueuedCells = 4,
  maxInterpreters = 64,
  maxPerEngine = 32,
  maxPerUser = 3,
  warmPoolSize = 1,
  memoryBytes = 512 * 1024 * 1024,
  tmpfsMiB = 128,
  pidsLimit = 512,
  startTimeoutMs = 60_000,
  maxConcurrentStarts = 2,
}: ConversationOptions = {}): ResolvedConversationOptions {
  checkMinimums(
    [
      ['idleMs', idleMs, 1_000],
      ['maxLifeMs', maxLifeMs, 10_000],
      ['historyTtlMs', historyTtlMs, 1_000],
      ['maxHistoryBytes', maxHistoryBytes, 0],
      ['maxConversationsPerUser', maxConversationsPerUser, 1],
      ['maxUserHistoryBytes', maxUserHistoryBytes, maxHistoryBytes, 'maxHistoryBytes'],
      ['memoryStoreBytes', memoryStoreBytes, 1024 * 1024],
      ['replayDeadlineMs', replayDeadlineMs, 1_000],
      ['maxQueuedCells', maxQueuedCells, 0],
      ['maxInterpreters', maxInterpreters, 1],
      ['maxPerEngine', maxPerEngine, 1],
      ['maxPerUser', maxPerUser, 1],
      ['warmPoolSize', warmPoolSize, 0],
      ['memoryBytes', memoryBytes, 64 * 1024 * 1024],
      ['tmpfsMiB', tmpfsMiB, 1],
      ['pidsLimit', pidsLimit, 96],
      ['startTimeoutMs', startTimeoutMs, 1_000],
      ['maxConcurrentStarts', maxConcurrentStarts, 1],
    ],
    { prefix: 'conversations.' },
  );
  if (
    redis !== undefined &&
    typeof (redis as Partial<RedisScriptClient> | null)?.eval !== 'function'
  ) {
    throw new InvalidArgumentError({
      argument: 'conversations.redis',
      value: typeof redis,
      message: 'must be a Redis client with `eval(script, numKeys, ...args)` (an ioredis client)',
    });
  }
  // The same policy as MCP tokens: a store that outlives the process needs a key (or `false`).
  const keys =
    store === undefined
      ? []
      : sealingKeys({
          store,
          encryptionKey,
          option: 'conversations.encryptionKey',
          records: 'python conversations (users\u2019 code and files)',
        });
  return {
    ...{ store, redis, keys, idleMs, maxLifeMs, historyTtlMs, maxHistoryBytes, maxInterpreters },
    ...{ maxPerEngine, maxPerUser, warmPoolSize, memoryBytes, tmpfsMiB, pidsLimit, startTimeoutMs },
    ...{ maxConversationsPerUser, maxUserHistoryBytes, memoryStoreBytes, replayDeadlineMs },
    ...{ maxConcurrentStarts, maxQueuedCells },
  };
}
