import { ToolbeltError } from './toolbelt-error.ts';

const name = 'ToolbeltMcpAuthorizationError';
const marker = `ai-toolbelt.error.${name}`;
const symbol = Symbol.for(marker);

/** Why an MCP server's sign-in is not (or no longer) in place. */
export type McpAuthorizationReason =
  /** The user has to sign in (first time, revoked, or more scope needed): see `authorizationUrl`. */
  | 'needs-auth'
  /** The callback's `state` is unknown, expired, used already, or belongs to another user or server. */
  | 'invalid-state'
  /** The authorization server refused to exchange the code (expired, reused, wrong client). */
  | 'exchange-failed'
  /** `finishAuth` was called for a server that has no `auth`. */
  | 'no-auth';

/**
 * An MCP server needs the user to sign in, or finishing a sign-in failed.
 * Thrown by a tool of a server whose token was revoked or lacks scope (the
 * model sees the message; the app shows `authorizationUrl`), and by
 * `toolbox.finishAuth()` for a bad callback. Never carries a token.
 *
 * @example
 * ```ts
 * if (McpAuthorizationError.isInstance(error) && error.authorizationUrl) redirect(error.authorizationUrl);
 * ```
 */
export class McpAuthorizationError extends ToolbeltError {
  private readonly [symbol] = true;
  /** The server's name (its key in `connectMcpServers({ servers })`). */
  readonly server: string;
  /** What went wrong. */
  readonly reason: McpAuthorizationReason;
  /** Where to send the user to sign in, when known. */
  readonly authorizationUrl: string | undefined;
  /** The tool whose call needed sign-in, when the error came from a call. */
  readonly tool: string | undefined;

  constructor({
    server,
    reason,
    message,
    authorizationUrl,
    tool,
    cause,
  }: {
    server: string;
    reason: McpAuthorizationReason;
    message: string;
    authorizationUrl?: string | undefined;
    tool?: string | undefined;
    cause?: unknown;
  }) {
    super({ name, message, cause });
    this.server = server;
    this.reason = reason;
    this.authorizationUrl = authorizationUrl;
    this.tool = tool;
  }

  static override isInstance(error: unknown): error is McpAuthorizationError {
    return ToolbeltError.hasMarker(error, marker);
  }
}
