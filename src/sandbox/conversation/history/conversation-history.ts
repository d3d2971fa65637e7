import { createHash } from 'node:crypto';
import { inTurn } from '../../../util/in-turn.ts';
import { SealedStore } from '../../../util/sealing/sealed-store.ts';
import type { ResolvedConversationOptions } from '../../options/conversation-options.ts';
import { historyBytes, pruneHistory } from './input-versions.ts';
import type { InterpreterHandle, KeptCell, KeptInput } from './interpreter-handle.ts';
import { boundedMemoryStorage } from './bounded-memory-storage.ts';
import { type UserConversation, boundUserConversations } from './user-conversations.ts';

/**
 * Interpreter handles and the history kept for restoring, in the app's store, sealed (see
 * `SealedStore`: keyed by keyed hashes of the user and conversation ids and of each file's
 * bytes, so another user's request with the same conversation id finds nothing, a value moved
 * under another key does not open, and listing keys tells nothing about the files). Input
 * files are kept under their own keys, so a cell's update rewrites only the small handle.
 * Stored bytes are bounded per conversation (`maxHistoryBytes`), per user (`maxConversationsPerUser`,
 * `maxUserHistoryBytes`) and, in the default memory store, in all (`memoryStoreBytes`).
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
  /** Each user's updates of their conversations' list, one at a time in this process. */
  private readonly userQueues = new Map<string, Promise<unknown>>();

  constructor({
    options,
  }: {
    /** Store, keys, history bounds. */
    options: ResolvedConversationOptions;
  }) {
    this.options = options;
    this.sealed = new SealedStore({
      store: options.store ?? boundedMemoryStorage({ maxBytes: options.memoryStoreBytes }),
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
    for (const kind of ['h', 'f', 'u', 'c']) await this.sealed.removeExpired([kind]);
  }

  /** A user's id as stored (a keyed hash, the same on every replica with the same keys). */
  async userTag(userId: string): Promise<string> {
    return await this.sealed.id(userId);
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
    // Handles of an earlier format carry no file versions: the conversation starts afresh.
    return handle?.v === 2 ? handle : undefined;
  }

  /**
   * Saves the handle (rewriting file records older than half `historyTtlMs`, so they outlive
   * it) and the user's list of conversations. Returns the handles of the user's least recently
   * used conversations whose history went to stay within the per-user bounds: their
   * interpreters are to be removed.
   */
  async save(owner: Owner, handle: InterpreterHandle): Promise<InterpreterHandle[]> {
    const ttlMs = this.options.historyTtlMs;
    for (const input of handle.inputs) {
      if (!input.kept || Date.now() - input.savedAt < ttlMs / 2) continue;
      const data = await this.loadInput(owner, input);
      if (data === undefined) input.kept = false;
      else await this.storeInput(owner, input, data);
    }
    await this.sealed.set(handleKey(owner), handle, { ttlMs });
    const conversation = await this.sealed.id(owner.conversationId);
    return await inTurn({
      queues: this.userQueues,
      key: owner.userId,
      work: () => this.boundUser(owner.userId, conversation, handle),
    });
  }

  /**
   * Records a cell that succeeded (for restoring), then drops the oldest cells while code and
   * the stored file versions a restore needs pass `maxHistoryBytes`.
   */
  async keepCell(owner: Owner, handle: InterpreterHandle, cell: KeptCell): Promise<void> {
    handle.cells.push(cell);
    await this.prune(owner, handle, 0);
  }

  /**
   * Adds the input files sent with cell `cell`: a changed file becomes a new version (the old
   * one stays only while a kept cell read it), its bytes kept while they fit `maxHistoryBytes`.
   * Returns the files the interpreter lacks: new, changed, or gone at its restore.
   */
  async addInputs(
    owner: Owner,
    handle: InterpreterHandle,
    files: ReadonlyArray<{ path: string; data: Uint8Array }>,
    cell: number,
  ): Promise<Array<{ path: string; data: Uint8Array }>> {
    const fresh: Array<{ path: string; data: Uint8Array }> = [];
    for (const file of files) {
      const digest = await this.sealed.id(createHash('sha256').update(file.data).digest('hex'));
      const current = handle.inputs.find(i => i.path === file.path && i.until === undefined);
      const absent = handle.absent.includes(file.path);
      handle.absent = handle.absent.filter(path => path !== file.path);
      if (current?.digest === digest) {
        if (absent) fresh.push(file);
        // Not stored before (too big then, or its record expired): stored now if it fits.
        if (!current.kept) await this.keepBytes(owner, handle, current, file.data);
        continue;
      }
      fresh.push(file);
      if (current !== undefined) current.until = cell;
      const bytes = file.data.byteLength;
      const input: KeptInput = { path: file.path, digest, bytes, cell, kept: false, savedAt: 0 };
      handle.inputs.push(input);
      await this.keepBytes(owner, handle, input, file.data);
    }
    await this.prune(owner, handle, 0);
    return fresh;
  }

  /** Removes the stored file versions of a history given up (the handle is replaced next). */
  async forget(owner: Owner, handle: InterpreterHandle): Promise<void> {
    const digests = new Set(handle.inputs.filter(input => input.kept).map(input => input.digest));
    for (const digest of digests) await this.sealed.remove(inputKey(owner, digest));
  }

  /** A stored version's bytes, or undefined when its record is gone. */
  async loadInput(owner: Owner, input: KeptInput): Promise<Uint8Array | undefined> {
    if (!input.kept) return undefined;
    const data = await this.sealed.get<string>(inputKey(owner, input.digest));
    return typeof data === 'string' ? Buffer.from(data, 'base64') : undefined;
  }

  /** Stores a version's bytes when they fit, dropping the oldest cells to make room for them. */
  private async keepBytes(
    owner: Owner,
    handle: InterpreterHandle,
    input: KeptInput,
    data: Uint8Array,
  ): Promise<void> {
    if (data.byteLength > this.options.maxHistoryBytes) return;
    const twin = handle.inputs.find(other => other.kept && other.digest === input.digest);
    if (twin !== undefined) {
      Object.assign(input, { kept: true, savedAt: twin.savedAt });
      return;
    }
    await this.prune(owner, handle, data.byteLength);
    // Other paths' current files may still fill the history: this one then stays unkept.
    if (historyBytes(handle) + data.byteLength > this.options.maxHistoryBytes) return;
    await this.storeInput(owner, input, data);
  }

  private async storeInput(owner: Owner, input: KeptInput, data: Uint8Array): Promise<void> {
    const base64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
    await this.sealed.set(inputKey(owner, input.digest), base64, {
      ttlMs: this.options.historyTtlMs,
    });
    input.kept = true;
    input.savedAt = Date.now();
  }

  private async prune(owner: Owner, handle: InterpreterHandle, reserveBytes: number) {
    const { maxHistoryBytes } = this.options;
    for (const digest of pruneHistory({ handle, maxHistoryBytes, reserveBytes })) {
      await this.sealed.remove(inputKey(owner, digest));
    }
  }

  /** Updates the user's list of conversations and removes the history of those past the bounds. */
  private async boundUser(
    userId: string,
    conversation: string,
    handle: InterpreterHandle,
  ): Promise<InterpreterHandle[]> {
    const key = ['c', { id: userId }];
    const list = (await this.sealed.get<UserConversation[]>(key)) ?? [];
    const { kept, evicted } = boundUserConversations({
      list,
      conversation,
      handle,
      maxConversations: this.options.maxConversationsPerUser,
      maxBytes: this.options.maxUserHistoryBytes,
    });
    const handles: InterpreterHandle[] = [];
    for (const { id } of evicted) {
      const segments = ['h', { id: userId }, { hashed: id }];
      const old = await this.sealed.get<InterpreterHandle>(segments);
      for (const input of old?.inputs ?? []) {
        if (!input.kept) continue;
        await this.sealed.remove(['f', { id: userId }, { hashed: id }, { hashed: input.digest }]);
      }
      await this.sealed.remove(segments);
      if (old?.v === 2) handles.push(old);
    }
    await this.sealed.set(key, kept, { ttlMs: this.options.historyTtlMs });
    return handles;
  }
}

/** An interpreter a user holds: where it runs. */
export type UserInterpreter = { engine: string; containerId: string; startedAt: number };

/** Whose conversation: the app's user id and conversation id (never stored in the clear). */
export type Owner = { userId: string; conversationId: string };

function handleKey({ userId, conversationId }: Owner) {
  return ['h', { id: userId }, { id: conversationId }];
}

function inputKey({ userId, conversationId }: Owner, digest: string) {
  return ['f', { id: userId }, { id: conversationId }, { hashed: digest }];
}
