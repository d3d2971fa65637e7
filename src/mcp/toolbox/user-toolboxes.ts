/**
 * What {@link UserToolboxes} needs of a per-user toolbox (an `McpToolbox`): by shape, so this
 * file does not import the toolbox that imports it.
 */
export type UserToolbox = {
  /** Connects its servers. */
  start(): Promise<void>;
  /** Closes its connections. */
  close(): Promise<void>;
  /** Picks up a sign-in another process finished. */
  recheckAuth(): Promise<void>;
  /** True while a tool call runs (never closed for idleness then). */
  readonly busy: boolean;
};

type Entry<TToolbox extends UserToolbox> = {
  toolbox: TToolbox;
  opening: Promise<TToolbox>;
  timer?: NodeJS.Timeout;
};

/**
 * The per-user toolboxes of one process-wide toolbox: one per user id,
 * created on first use (concurrent first requests share one connect), closed
 * after `idleTimeoutMs` without `forUser()` or tool calls (never during a
 * call), and forgotten when closed. Internal to `McpToolbox`.
 *
 * @example
 * ```ts
 * const users = new UserToolboxes({ idleTimeoutMs: 900_000, create: userId => makeToolbox(userId) });
 * const toolbox = await users.get({ userId: 'u1' });
 * ```
 */
export class UserToolboxes<TToolbox extends UserToolbox> {
  private entries = new Map<string, Entry<TToolbox>>();
  private idleTimeoutMs: number;
  private create: (options: { userId: string; onClose: () => void; onUse: () => void }) => TToolbox;

  constructor(options: {
    /** Closes a toolbox unused this long (Infinity: never). */
    idleTimeoutMs: number;
    /** Makes an unstarted toolbox; it calls `onClose` when closed and `onUse` on each tool call. */
    create: (options: { userId: string; onClose: () => void; onUse: () => void }) => TToolbox;
  }) {
    this.idleTimeoutMs = options.idleTimeoutMs;
    this.create = options.create;
  }

  /** The user's toolbox, connected (its servers `ready` or `needs-auth`). */
  async get({
    userId,
    abortSignal,
  }: {
    userId: string;
    abortSignal?: AbortSignal | undefined;
  }): Promise<TToolbox> {
    let entry = this.entries.get(userId);
    const fresh = entry === undefined;
    if (entry === undefined) {
      const created: Entry<TToolbox> = {
        toolbox: this.create({
          userId,
          onClose: () => this.forget(userId, created),
          onUse: () => this.arm(created),
        }),
        opening: undefined as never,
      };
      // Started without the caller's signal: other requests of this user may share it.
      created.opening = created.toolbox.start().then(
        () => created.toolbox,
        async error => {
          this.forget(userId, created);
          await created.toolbox.close();
          throw error;
        },
      );
      this.entries.set(userId, created);
      entry = created;
    }
    const toolbox = await abortable(entry.opening, abortSignal);
    // Another process may have finished this user's sign-in (a shared store).
    if (!fresh) await toolbox.recheckAuth();
    this.arm(entry);
    return toolbox;
  }

  /** Runs `fn` for every connected toolbox. */
  forEach(fn: (toolbox: TToolbox) => void): void {
    for (const entry of this.entries.values()) void entry.opening.then(fn, () => {});
  }

  /** Closes every per-user toolbox. */
  async closeAll(): Promise<void> {
    const entries = [...this.entries.values()];
    await Promise.all(entries.map(entry => entry.toolbox.close()));
  }

  private arm(entry: Entry<TToolbox>): void {
    clearTimeout(entry.timer);
    if (!Number.isFinite(this.idleTimeoutMs)) return;
    entry.timer = setTimeout(() => {
      if (entry.toolbox.busy) this.arm(entry);
      else void entry.toolbox.close();
    }, this.idleTimeoutMs);
    entry.timer.unref();
  }

  private forget(userId: string, entry: Entry<TToolbox>): void {
    clearTimeout(entry.timer);
    if (this.entries.get(userId) === entry) this.entries.delete(userId);
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
