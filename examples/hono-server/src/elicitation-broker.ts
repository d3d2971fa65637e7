import { randomUUID } from 'node:crypto';
import type { McpElicitationRequest, McpElicitationResult } from 'ai-toolbelt/mcp';

/** What the page needs to show one elicitation form (the `data-mcp-elicitation` part). */
export type ElicitationPart = {
  /** Answer it at `POST /api/mcp/elicitations/:id`. */
  id: string;
  server: string;
  message: string;
  /** The form's fields (form mode). */
  requestedSchema?: unknown;
  /** The tool call it interrupts. */
  toolCallId?: string;
  /** `pending` until answered, then the user's action. */
  state: 'pending' | 'accept' | 'decline' | 'cancel';
};

type Pending = {
  userId: string;
  part: ElicitationPart;
  resolve: (r: McpElicitationResult) => void;
};

/**
 * Carries MCP elicitations from the toolbox hook to the user's open chat
 * stream (which writes them as a form) and the form's answer back: the hook
 * (`connectMcpServers({ onElicitation: broker.handler })`) waits until the
 * user's `POST /api/mcp/elicitations/:id` arrives. Only the user the request
 * is for can answer it; with no chat stream open the request is declined.
 *
 * @example
 * ```ts
 * const broker = new ElicitationBroker();
 * const stop = broker.subscribe(userId, part => writer.write({ type: 'data-mcp-elicitation', id: part.id, data: part }));
 * ```
 */
export class ElicitationBroker {
  #pending = new Map<string, Pending>();
  #listeners = new Map<string, Set<(part: ElicitationPart) => void>>();

  /** The toolbox hook. */
  readonly handler = (request: McpElicitationRequest): Promise<McpElicitationResult> => {
    const listeners = this.#listeners.get(request.userId ?? '');
    if (listeners === undefined || listeners.size === 0 || request.mode !== 'form')
      return Promise.resolve({ action: 'decline' });
    return new Promise(resolve => {
      const part: ElicitationPart = {
        id: randomUUID(),
        server: request.server,
        message: request.message,
        requestedSchema: request.requestedSchema,
        ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
        state: 'pending',
      };
      const pending: Pending = { userId: request.userId ?? '', part, resolve };
      this.#pending.set(part.id, pending);
      // The server gave up (or the toolbox closed): close the form.
      request.abortSignal.addEventListener(
        'abort',
        () => this.#settle(pending, { action: 'cancel' }),
        {
          once: true,
        },
      );
      for (const listener of listeners) listener(part);
    });
  };

  /** Receives this user's elicitations (new, then answered) until the returned function is called. */
  subscribe(userId: string, listener: (part: ElicitationPart) => void): () => void {
    let set = this.#listeners.get(userId);
    if (set === undefined) this.#listeners.set(userId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(userId);
    };
  }

  /** The user's answer; false when there is no such pending request for this user. */
  answer({
    id,
    userId,
    result,
  }: {
    id: string;
    userId: string;
    result: McpElicitationResult;
  }): boolean {
    const pending = this.#pending.get(id);
    if (pending === undefined || pending.userId !== userId) return false;
    this.#settle(pending, result);
    return true;
  }

  #settle(pending: Pending, result: McpElicitationResult): void {
    if (!this.#pending.delete(pending.part.id)) return;
    pending.resolve(result);
    const answered = { ...pending.part, state: result.action };
    for (const listener of this.#listeners.get(pending.userId) ?? []) listener(answered);
  }
}
