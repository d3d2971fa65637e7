import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { boundJson } from '../../util/untrusted/bound-json.ts';
import { safeLabel } from '../../util/untrusted/safe-label.ts';
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
  /** Stops listening for the request's abort. */
  done: () => void;
};

/** Options of {@link McpElicitationBroker}. */
export type McpElicitationBrokerOptions = {
  /**
   * Forms one user may have open at once; a server asking for more is
   * declined at once (it sees `decline`, the chat sees nothing), so a
   * looping tool or a busy user cannot pile forms up in memory.
   */
  maxOpenPerUser?: number;
};

/**
 * Carries MCP elicitations from the toolbox hook to the user's open chat
 * stream (which shows them as a form) and the form's answer back: the hook
 * (`connectMcpServers({ onElicitation: broker.handler })`) waits until the
 * app calls `answer` with the user's reply (e.g. from a `POST` route). Only
 * the user the request is for can answer it; with no chat stream of that user
 * open, a URL-mode request, or `maxOpenPerUser` forms of that user already
 * open, it is declined. A form is withdrawn (its part turns `cancel`) when
 * the server gives up, the call ends or `elicitationTimeoutMs` passes, and a
 * later `answer` returns false. One broker lives in one process: with
 * replicas, route a user's answer to the replica holding their chat stream
 * (sticky sessions), or the answer finds nothing to settle.
 *
 * @example
 * ```ts
 * const broker = new McpElicitationBroker({ maxOpenPerUser: 3 });
 * const stop = broker.subscribe(userId, part => writer.write({ type: 'data-mcp-elicitation', id: part.id, data: part }));
 * ```
 */
export class McpElicitationBroker {
  private readonly pending = new Map<string, Pending>();
  private readonly openPerUser = new Map<string, number>();
  private readonly listeners = new Map<string, Set<(part: McpElicitationPart) => void>>();
  private readonly maxOpenPerUser: number;

  constructor({ maxOpenPerUser = 3 }: McpElicitationBrokerOptions = {}) {
    if (!Number.isInteger(maxOpenPerUser) || maxOpenPerUser < 1) {
      throw new InvalidArgumentError({
        argument: 'maxOpenPerUser',
        value: maxOpenPerUser,
        message: 'expected a whole number of at least 1 (forms one user may have open at once).',
      });
    }
    this.maxOpenPerUser = maxOpenPerUser;
  }

  /** The toolbox hook. */
  readonly handler = (request: McpElicitationRequest): Promise<McpElicitationResult> => {
    const userId = request.userId ?? '';
    const listeners = this.listeners.get(userId);
    if (listeners === undefined || listeners.size === 0 || request.mode !== 'form')
      return Promise.resolve({ action: 'decline' });
    if ((this.openPerUser.get(userId) ?? 0) >= this.maxOpenPerUser)
      return Promise.resolve({ action: 'decline' });
    const { abortSignal } = request;
    if (abortSignal.aborted) return Promise.resolve({ action: 'cancel' });
    return new Promise(resolve => {
      const part: McpElicitationPart = {
        id: crypto.randomUUID(),
        server: request.server,
        // From the server, shown in the chat: nothing may reorder or hide the question, and
        // the form's schema must encode in the chat's stream whatever its depth.
        message: safeLabel(request.message),
        ...(request.requestedSchema === undefined
          ? {}
          : { requestedSchema: formSchema(request.requestedSchema) }),
        ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
        state: 'pending',
      };
      const withdraw = () => this.settle(pending, { action: 'cancel' });
      const pending: Pending = {
        userId,
        part,
        resolve,
        done: () => abortSignal.removeEventListener('abort', withdraw),
      };
      this.pending.set(part.id, pending);
      this.openPerUser.set(userId, (this.openPerUser.get(userId) ?? 0) + 1);
      // The server gave up, the call ended, or the user's time is up: withdraw the form.
      abortSignal.addEventListener('abort', withdraw, { once: true });
      for (const listener of listeners) listener(part);
    });
  };

  /** Forms open for a user right now (shown, not yet answered or withdrawn). */
  openForms(userId: string): number {
    return this.openPerUser.get(userId) ?? 0;
  }

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

  /**
   * The user's answer; false when no such form is open for this user (never
   * shown to them, already answered, or withdrawn: timed out, or the server
   * gave up).
   */
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
    pending.done();
    const open = (this.openPerUser.get(pending.userId) ?? 1) - 1;
    if (open > 0) this.openPerUser.set(pending.userId, open);
    else this.openPerUser.delete(pending.userId);
    pending.resolve(result);
    const answered = { ...pending.part, state: result.action };
    for (const listener of this.listeners.get(pending.userId) ?? []) listener(answered);
  }
}

/**
 * A form's schema as the chat shows it: bounded in depth (`boundJson`) and its fields' titles and
 * descriptions (the form's labels) without control or invisible formatting characters. Names
 * and values stay as the server sent them: the answer must match them.
 */
function formSchema(schema: unknown): unknown {
  const bounded = boundJson(schema).value;
  const properties = (bounded as { properties?: unknown } | null)?.properties;
  if (typeof properties !== 'object' || properties === null) return bounded;
  for (const field of Object.values(properties)) {
    if (typeof field !== 'object' || field === null) continue;
    for (const label of ['title', 'description'] as const) {
      const text = (field as Record<string, unknown>)[label];
      if (typeof text === 'string') (field as Record<string, unknown>)[label] = safeLabel(text);
    }
  }
  return bounded;
}
