import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { CallTracker } from '../calls/call-tracker.ts';
import {
  answerElicitation,
  elicitationRequest,
  type McpElicitationHandler,
} from './elicitation.ts';
import type { McpEvent } from '../types.ts';

/**
 * Answers one server's `elicitation/create` requests through the app's hook:
 * the running tool calls' deadlines pause while the user answers, the
 * request names the call it belongs to, and it is aborted when the server
 * cancels or the connection closes. Internal to `McpServerConnection`.
 *
 * @example
 * ```ts
 * const elicit = elicitationBridge({ server: 'notes', userId, handler, timeoutMs, calls, lifetime, emit });
 * const result = await elicit(params, signal);
 * ```
 */
export function elicitationBridge({
  server,
  userId,
  handler,
  timeoutMs,
  calls,
  lifetime,
  emit,
}: {
  /** The server's name. */
  server: string;
  /** The user of a per-user connection. */
  userId: string | undefined;
  /** The app's hook (declined without it). */
  handler: McpElicitationHandler | undefined;
  /** How long the user may take. */
  timeoutMs: number;
  /** The server's running tool calls. */
  calls: CallTracker;
  /** Aborted when the connection closes. */
  lifetime: AbortSignal;
  /** Reports the answer and a misbehaving hook. */
  emit: (event: McpEvent) => void;
}): (params: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult> {
  return (params, signal) =>
    calls.whileUserAnswers(async origin => {
      const result = await answerElicitation({
        handler,
        timeoutMs,
        onError: error => emit({ type: 'error', server, error }),
        request: elicitationRequest({
          params,
          origin: {
            server,
            ...(userId === undefined ? {} : { userId }),
            ...origin,
            abortSignal: AbortSignal.any([signal, lifetime]),
          },
        }),
      });
      emit({ type: 'elicitation', server, action: result.action });
      return result;
    });
}
