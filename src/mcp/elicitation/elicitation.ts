// elicitation/: a server's questions to the user during a tool call: checked and bounded, answered
// by the app's handler, or carried to the chat and back by the broker.
import { setTimeout as delay } from 'node:timers/promises';
import type {
  ElicitRequest,
  ElicitRequestFormParams,
  ElicitRequestURLParams,
  ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';

/** Where an elicitation came from, added to the server's request. */
type ElicitationOrigin = {
  /** The server's name. */
  server: string;
  /** The user whose toolbox it is (per-user toolboxes). */
  userId?: string;
  /** The tool call it belongs to, when exactly one call of that server is running. */
  tool?: string;
  /** The AI SDK tool call id of that call. */
  toolCallId?: string;
  /**
   * Aborted when the server cancels, the call ends, the toolbox closes, the
   * user's time (`elicitationTimeoutMs`) is up, or the request was settled:
   * withdraw the form then, later answers count for nothing.
   */
  abortSignal: AbortSignal;
};

/**
 * A server asks the user for input during a tool call (MCP elicitation):
 * a form (`requestedSchema`: flat object of string, number, boolean and enum
 * fields, with optional `default`s) or, when enabled, a URL to open.
 */
export type McpElicitationRequest = ElicitationOrigin &
  (
    | ({ mode: 'form' } & Omit<ElicitRequestFormParams, 'mode' | '_meta' | 'task'>)
    | ({ mode: 'url' } & Omit<ElicitRequestURLParams, 'mode' | '_meta' | 'task'>)
  );

/**
 * The user's answer: `accept` with the form's values (fields left out get
 * their schema `default`), `decline` (said no) or `cancel` (dismissed).
 */
export type McpElicitationResult =
  | { action: 'accept'; content?: Record<string, string | number | boolean | string[]> }
  | { action: 'decline' }
  | { action: 'cancel' };

/** Answers elicitations; without one, every request is declined at once. */
export type McpElicitationHandler = (
  request: McpElicitationRequest,
) => McpElicitationResult | Promise<McpElicitationResult>;

/**
 * Runs the app's elicitation hook for one server request and returns the
 * result to send back: `decline` without a hook (never leave a server
 * waiting), `cancel` when the hook throws, returns nonsense, or the user does
 * not answer within `timeoutMs`; an `accept` without content becomes `{}` so
 * the SDK fills in the schema's defaults. The hook's `abortSignal` is aborted
 * once this returns (answered, timed out, or the server gave up), so a form
 * the hook shows is withdrawn and a late answer finds nothing.
 *
 * @example
 * ```ts
 * const result = await answerElicitation({ handler, request, timeoutMs: 600_000, onError });
 * ```
 */
export async function answerElicitation({
  handler,
  request,
  timeoutMs,
  onError,
}: {
  /** The app's hook, if any. */
  handler: McpElicitationHandler | undefined;
  /** The server's request with its origin. */
  request: McpElicitationRequest;
  /** How long the user may take. */
  timeoutMs: number;
  /** Reports a throwing or misbehaving hook. */
  onError: (error: Error) => void;
}): Promise<ElicitResult> {
  if (handler === undefined) return { action: 'decline' };
  // Ends the hook's part: the form goes away however this request ends.
  const over = new AbortController();
  const forHook = { ...request, abortSignal: AbortSignal.any([request.abortSignal, over.signal]) };
  try {
    const answer = await Promise.race([
      Promise.resolve().then(() => handler(forHook)),
      delay(timeoutMs, { action: 'cancel' } as const, { signal: over.signal, ref: false }),
      new Promise<McpElicitationResult>((resolve, reject) => {
        const { abortSignal } = request;
        if (abortSignal.aborted) reject(abortSignal.reason);
        abortSignal.addEventListener('abort', () => reject(abortSignal.reason), { once: true });
      }),
    ]);
    return normalize(answer, onError);
  } catch (error) {
    if (request.abortSignal.aborted) throw error;
    onError(error instanceof Error ? error : new Error(String(error)));
    return { action: 'cancel' };
  } finally {
    over.abort();
  }
}

function normalize(answer: unknown, onError: (error: Error) => void): ElicitResult {
  const action = (answer as { action?: unknown } | null)?.action;
  if (action === 'decline' || action === 'cancel') return { action };
  if (action === 'accept') {
    const content = (answer as { content?: unknown }).content;
    if (content === undefined) return { action, content: {} };
    if (content !== null && typeof content === 'object' && !Array.isArray(content))
      return { action, content: { ...(content as Record<string, string>) } };
  }
  onError(
    new Error(
      `The elicitation hook returned ${JSON.stringify(answer)}; expected { action: 'accept', content } | { action: 'decline' } | { action: 'cancel' }.`,
    ),
  );
  return { action: 'cancel' };
}

/**
 * The app-facing request for a server's `elicitation/create` params: mode
 * defaulted to `form`, protocol fields (`_meta`, `task`) left out, origin added.
 *
 * @example
 * ```ts
 * const request = elicitationRequest({ params, origin: { server: 'notes', abortSignal } });
 * ```
 */
export function elicitationRequest({
  params,
  origin,
}: {
  /** The server's request params. */
  params: ElicitRequest['params'];
  /** Where it came from. */
  origin: ElicitationOrigin;
}): McpElicitationRequest {
  const {
    _meta: _ignored,
    task: _task,
    ...fields
  } = params as ElicitRequest['params'] & {
    _meta?: unknown;
    task?: unknown;
  };
  return { ...fields, mode: fields.mode ?? 'form', ...origin } as McpElicitationRequest;
}
