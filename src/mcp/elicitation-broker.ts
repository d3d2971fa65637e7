import type { McpElicitationRequest, McpElicitationResult } from './elicitation.ts';

/** What a chat page needs to show one elicitation form, e.g. as a `data-mcp-elicitation` part. */
export type McpElicitationPart = {
  /** Pass it back with the user's answer (`broker.answer({ id, ... })`). */
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
  part: McpElicitationPart;
  resolve: (r: McpElicitationResult) => void;
};

/**
 * Carries MCP elicitations from the toolbox hook to the user's open chat
 * stream (which shows them as a form) and the form's answer back: the hook
 * (`connectMcpServers({ onElicitation: broker.handler })`) waits until the
 * app calls `answer` with the user's reply (e.g. from a `POST` route). Only
 * the user the request is for can answer it; with no chat stream of that user
 * open, or a URL-mode request, it is declined. One broker lives in one
 * process: with replicas, route a user's answer to the replica holding their
 * chat stream (sticky sessions), or the answer finds nothing to settle.
 *
 * @example
 * ```ts
 * const broker = new McpElicitationBroker();
 * const stop = broker.subscribe(userId, part => writer.write({ type: 'data-mcp-elicitation', id: part.id, data: part }));
 * ```
 */
export class McpElicitationBroker {
  private readonly pending = new Map<string, Pending>();
  private readonly listeners = new Map<string, Set<(part: McpElicitationPart) => void>>();

  /** The toolbox hook. */
  readonly handler = (request: McpElicitationRequest): Promise<McpElicitationResult> => {
    const listeners = this.listeners.get(request.userId ?? '');
    if (listeners === undefined || listeners.size === 0 || request.mode !== 'form')
      return Promise.resolve({ action: 'decline' });
    return new Promise(resolve => {
      const part: McpElicitationPart = {
        id: crypto.randomUUID(),
        server: request.server,
        message: request.message,
        requestedSchema: request.requestedSchema,
        ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
        state: 'pending',
      };
      const pending: Pending = { userId: request.userId ?? '', part, resolve };
      this.pending.set(part.id, pending);
      // The server gave up (or the toolbox closed): close the form.
      request.abortSignal.addEventListener(
        'abort',
        () => this.settle(pending, { action: 'cancel' }),
        {
          once: true,
        },
      );
      for (const listener of listeners) listener(part);
    });
  };

  /** Receives this user's elicitations (new, then answered) until the returned function is called. */
  subscribe(userId: string, listener: (part: McpElicitationPart) => void): () => void {
    let set = this.listeners.get(userId);
    if (set === undefined) this.listeners.set(userId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(userId);
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
    const pending = this.pending.get(id);
    if (pending === undefined || pending.userId !== userId) return false;
    this.settle(pending, result);
    return true;
  }

  private settle(pending: Pending, result: McpElicitationResult): void {
    if (!this.pending.delete(pending.part.id)) return;
    pending.resolve(result);
    const answered = { ...pending.part, state: result.action };
    for (const listener of this.listeners.get(pending.userId) ?? []) listener(answered);
  }
}
