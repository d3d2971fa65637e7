import { createHash } from 'node:crypto';
import { SealedStore, type SealedStoreStorage } from '../../util/sealing/sealed-store.ts';
import type { ResolvedConversationOptions } from '../options/conversation-options.ts';

/** A cell kept for restoring: its code (it succeeded when it ran). */
export type KeptCell = {
  /** The cell's number in the conversation. */
  n: number;
  /** Its code. */
  code: string;
};

/** An input file the interpreter has; its bytes are kept in the store when `kept`. */
export type KeptInput = {
  /** Absolute path under /tmp. */
  path: string;
  /** SHA-256 of the bytes (hex): a file sent again unchanged is not sent twice. */
  sha256: string;
  /** Size. */
  bytes: number;
  /** False when it did not fit `maxHistoryBytes`: it cannot be restored. */
  kept: boolean;
};

/**
 * What the store holds per (user, conversation): where the live interpreter is (engine,
 * container, the secret its supervisor serves) and what is needed to rebuild it.
 */
export type InterpreterHandle = {
  v: 1;
  /** The engine's name (`DockerSandbox#engineStatus`). */
  engine: string;
  /** The interpreter's container. */
  containerId: string;
  /** The secret the interpreter's supervisor checks on every request. */
  secret: string;
  /** When the container was started (epoch ms). */
  startedAt: number;
  /** When the last cell ended (epoch ms). */
  usedAt: number;
  /** Cells run in this conversation, failed ones included. */
  cellCount: number;
  /** Successful cells kept for restoring, oldest first. */
  cells: KeptCell[];
  /** Successful cells dropped from `cells` to stay within `maxHistoryBytes`. */
  dropped: number;
  /** The interpreter's input files. */
  inputs: KeptInput[];
};

/**
 * Interpreter handles and the history kept for restoring, in the app's store, sealed (see
 * `SealedStore`: keyed by hashes of the user and conversation ids, so another user's request
 * with the same conversation id finds nothing, and a value moved under another key does not
 * open). Input files are kept under their own keys, so a cell's update rewrites only the small
 * handle.
 *
 * @example
 * ```ts
 * const history = new ConversationHistory({ options });
 * const handle = await history.load({ userId, conversationId });
 * ```
 */
export class ConversationHistory {
  private readonly sealed: SealedStore;
  private readonly options: ResolvedConversationOptions;
  /** When expired records of the default (memory) store were last removed. */
  private sweptAt = Date.now();

  constructor({
    options,
  }: {
    /** Store, keys, history bounds. */
    options: ResolvedConversationOptions;
  }) {
    this.options = options;
    this.sealed = new SealedStore({
      store: options.store ?? memoryStorage(),
      prefix: 'ai-toolbelt:conversation',
      purpose: 'python-conversations',
      keys: options.keys,
      keyOption: 'conversations.encryptionKey',
    });
  }

  /**
   * Removes expired handles and inputs from the default memory store, at most every 10 minutes
   * (an app's own store expires keys by `ttl`, or by the expiry kept inside each record on read).
   */
  async sweep(): Promise<void> {
    if (this.options.store !== undefined || Date.now() - this.sweptAt < 600_000) return;
    this.sweptAt = Date.now();
    for (const kind of ['h', 'f', 'u']) await this.sealed.removeExpired([kind]);
  }

  /** The interpreters a user holds, as last recorded (for the per-user bound, every replica's). */
  async userInterpreters(userId: string): Promise<UserInterpreter[]> {
    return (await this.sealed.get<UserInterpreter[]>(['u', { id: userId }])) ?? [];
  }

  async saveUserInterpreters(userId: string, list: readonly UserInterpreter[]): Promise<void> {
    await this.sealed.set(['u', { id: userId }], list, { ttlMs: this.options.historyTtlMs });
  }

  async load(owner: Owner): Promise<InterpreterHandle | undefined> {
    const handle = await this.sealed.get<InterpreterHandle>(handleKey(owner));
    return handle?.v === 1 ? handle : undefined;
  }

  async save(owner: Owner, handle: InterpreterHandle): Promise<void> {
    await this.sealed.set(handleKey(owner), handle, { ttlMs: this.options.historyTtlMs });
  }

  /**
   * Records a cell that succeeded (for restoring), dropping the oldest cells while code and
   * kept inputs together pass `maxHistoryBytes`.
   */
  keepCell(handle: InterpreterHandle, cell: KeptCell): void {
    handle.cells.push(cell);
    while (handle.cells.length > 0 && historyBytes(handle) > this.options.maxHistoryBytes) {
      handle.cells.shift();
      handle.dropped++;
    }
  }

  /**
   * Adds input files to the handle (replacing older versions of the same path) and keeps
   * their bytes in the store while they fit `maxHistoryBytes`. Returns the files that are new
   * or changed for the interpreter.
   */
  async addInputs(
    owner: Owner,
    handle: InterpreterHandle,
    files: ReadonlyArray<{ path: string; data: Uint8Array }>,
  ): Promise<Array<{ path: string; data: Uint8Array }>> {
    const fresh: Array<{ path: string; data: Uint8Array }> = [];
    for (const file of files) {
      const sha256 = createHash('sha256').update(file.data).digest('hex');
      const known = handle.inputs.find(input => input.path === file.path);
      if (known?.sha256 === sha256) continue;
      fresh.push(file);
      handle.inputs = handle.inputs.filter(input => input.path !== file.path);
      const input: KeptInput = {
        path: file.path,
        sha256,
        bytes: file.data.byteLength,
        kept: false,
      };
      handle.inputs.push(input);
      if (historyBytes(handle) + file.data.byteLength <= this.options.maxHistoryBytes) {
        await this.sealed.set(
          inputKey(owner, sha256),
          Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength).toString(
            'base64',
          ),
          { ttlMs: this.options.historyTtlMs },
        );
        input.kept = true;
      }
    }
    return fresh;
  }

  /** The kept input files' bytes; the paths of those that are gone (not kept, or expired). */
  async loadInputs(
    owner: Owner,
    handle: InterpreterHandle,
  ): Promise<{ files: Array<{ path: string; data: Uint8Array }>; missing: string[] }> {
    const files: Array<{ path: string; data: Uint8Array }> = [];
    const missing: string[] = [];
    for (const input of handle.inputs) {
      const data = input.kept
        ? await this.sealed.get<string>(inputKey(owner, input.sha256))
        : undefined;
      if (typeof data === 'string')
        files.push({ path: input.path, data: Buffer.from(data, 'base64') });
      else missing.push(input.path);
    }
    return { files, missing };
  }
}

/** An interpreter a user holds: where it runs. */
export type UserInterpreter = { engine: string; containerId: string; startedAt: number };

/** Whose conversation: the app's user id and conversation id (never stored in the clear). */
export type Owner = { userId: string; conversationId: string };

function handleKey({ userId, conversationId }: Owner) {
  return ['h', { id: userId }, { id: conversationId }];
}

function inputKey({ userId, conversationId }: Owner, sha256: string) {
  return ['f', { id: userId }, { id: conversationId }, sha256];
}

/** Bytes held for restoring: kept cells' code and kept inputs. */
function historyBytes(handle: InterpreterHandle): number {
  let total = 0;
  for (const cell of handle.cells) total += Buffer.byteLength(cell.code, 'utf8');
  for (const input of handle.inputs) if (input.kept) total += input.bytes;
  return total;
}

/** The default store: this process's memory (expiry is kept inside each record by `SealedStore`). */
function memoryStorage(): SealedStoreStorage {
  const items = new Map<string, unknown>();
  return {
    getItem: async (key: string) => (items.get(key) ?? null) as never,
    setItem: async (key: string, value: unknown) => void items.set(key, value),
    removeItem: async (key: string) => void items.delete(key),
    getKeys: async (base?: string) =>
      [...items.keys()].filter(key => base === undefined || key.startsWith(base)),
  } as unknown as SealedStoreStorage;
}
