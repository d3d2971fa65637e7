import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltSandboxBusyError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/**
 * The sandbox refused new work because a bound was reached: `runs` when `maxQueued` runs
 * already wait for a slot, `sessions` when `maxSessions` sessions are open, `interpreters` when
 * conversation interpreters are at a bound (`maxInterpreters`, or `maxPerEngine` / `maxPerUser`
 * with none idle to evict), `cells` when `maxQueuedCells` cells of one conversation already wait. Nothing was started; retrying later (or shedding load, e.g. an HTTP 503 with `Retry-After`) is the
 * caller's choice.
 *
 * @example
 * ```ts
 * if (SandboxBusyError.isInstance(error)) return new Response('busy', { status: 503, headers: { 'retry-after': '5' } });
 * ```
 */
export class SandboxBusyError extends ToolbeltError {
  private readonly [symbol] = true;
  /** What is full: waiting runs, open sessions, live conversation interpreters or a conversation's waiting cells. */
  readonly resource: 'runs' | 'sessions' | 'interpreters' | 'cells';
  /** The bound that was reached (`maxQueued`, `maxSessions`, or an interpreter bound). */
  readonly limit: number;
  /** How long to wait before trying again, when the sandbox can tell (e.g. for `Retry-After`). */
  readonly retryAfterMs: number | undefined;

  constructor({
    resource,
    limit,
    retryAfterMs,
  }: {
    resource: 'runs' | 'sessions' | 'interpreters' | 'cells';
    limit: number;
    retryAfterMs?: number;
  }) {
    super({
      name,
      message:
        resource === 'runs'
          ? `The sandbox is busy: ${limit} runs are already waiting for a slot (maxQueued). Try again later.`
          : resource === 'sessions'
            ? `The sandbox is busy: ${limit} sessions are already open (maxSessions). Close one or try again later.`
            : resource === 'cells'
              ? `The conversation is busy: ${limit} more cells already wait for its interpreter (conversations.maxQueuedCells). Try again when they end.`
              : `The sandbox is busy: ${limit} conversation interpreters are live and none is idle to make room (conversations.maxInterpreters / maxPerEngine / maxPerUser). Try again later.`,
    });
    this.resource = resource;
    this.limit = limit;
    this.retryAfterMs = retryAfterMs;
  }

  static override isInstance(error: unknown): error is SandboxBusyError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
