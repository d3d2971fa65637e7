import { McpConnectionError } from '../../errors/mcp-connection-error.ts';
import { PendingWork } from '../../util/pending-work.ts';
import { disposeConnection } from './dispose-connection.ts';
import type { OpenedClient } from './open-client.ts';

/**
 * Holds one server's live MCP client. Every new client, and every drop of
 * one, starts a new generation: callbacks of a replaced client compare their
 * generation and bail out. Dropped clients are torn down in the background
 * and `close()` waits for all of them. Internal to `McpServerConnection`.
 *
 * @example
 * ```ts
 * const slot = new ClientSlot({ server: 'fs' });
 * const live = await slot.open(generation => openClient({ ...options, handlers: handlersFor(generation) }));
 * slot.retire(); // the server went away: its callbacks turn stale
 * slot.release();
 * ```
 */
export class ClientSlot {
  private server: string;
  private live: OpenedClient | undefined;
  private current = 0;
  private opening: Promise<unknown> | undefined;
  private disposals = new PendingWork();

  constructor({ server }: { /** The server's name (for errors). */ server: string }) {
    this.server = server;
  }

  /** The generation of the current (or opening) client. */
  get generation(): number {
    return this.current;
  }

  /** The live client, if there is one. */
  get client(): OpenedClient | undefined {
    return this.live;
  }

  /** Waits until `close()` may rely on it: tracked teardown in the background. */
  track(disposal: Promise<void>): void {
    this.disposals.track(disposal);
  }

  /**
   * Opens a client as a new generation and keeps it. Throws
   * {@link McpConnectionError} if the generation ended meanwhile (the
   * connection closed): the late client is torn down, not resurrected.
   */
  async open(open: (generation: number) => Promise<OpenedClient>): Promise<OpenedClient> {
    const generation = ++this.current;
    const attempt = open(generation);
    this.opening = attempt;
    const live = await attempt.finally(() => (this.opening = undefined));
    if (generation !== this.current) {
      this.track(disposeConnection(live));
      throw new McpConnectionError({
        server: this.server,
        message: `MCP server "${this.server}" was closed.`,
      });
    }
    this.live = live;
    return live;
  }

  /** Waits for an `open()` in flight to end, either way. */
  async opened(): Promise<void> {
    await this.opening?.catch(() => {});
  }

  /** Ends the current generation: the client's callbacks turn stale. */
  retire(): void {
    this.current++;
  }

  /** Lets go of the client and tears it down in the background. */
  release(): void {
    const live = this.live;
    this.live = undefined;
    if (live !== undefined) this.track(disposeConnection(live));
  }

  /** Tears down the client, once an attempt in flight has ended, and waits for every teardown. */
  async close({
    terminateSession,
  }: {
    /** Ask an HTTP server to end the session (only while it was healthy). */
    terminateSession: boolean;
  }): Promise<void> {
    // An attempt in flight sees the abort, tears itself down and reports it via track.
    await this.opened();
    const live = this.live;
    this.live = undefined;
    await disposeConnection({ ...live, terminateSession });
    await this.disposals.settled();
  }
}
