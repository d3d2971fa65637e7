import { McpAuthorizationError } from '../../errors/mcp-authorization-error.ts';
import { McpConnectionError } from '../../errors/mcp-connection-error.ts';
import { appWideMessage } from '../auth/server-sign-in.ts';
import type { McpServerState } from '../types.ts';

/**
 * The error a call (or `finishAuth`) gets from a server that is not
 * connected, saying why in words the model and the app can act on:
 * {@link McpAuthorizationError} while the user has to sign in, otherwise
 * {@link McpConnectionError}.
 *
 * @example
 * ```ts
 * throw serverUnavailable({ server: 'github', state: 'needs-auth', authorizationUrl, tool: 'search' });
 * ```
 */
export function serverUnavailable({
  server,
  state,
  error,
  authorizationUrl,
  appWide = false,
  tool,
}: {
  /** The server's name. */
  server: string;
  /** Its state. */
  state: McpServerState;
  /** Why it is in that state. */
  error?: Error | undefined;
  /** Where the user signs in, while `needs-auth`. */
  authorizationUrl?: string | undefined;
  /** One sign-in serves every user: the URL is left out and the message names the administrator. */
  appWide?: boolean;
  /** The tool that was called. */
  tool?: string;
}): Error {
  const what = tool === undefined ? `MCP server "${server}"` : `Tool "${tool}"`;
  if (state === 'needs-auth' && appWide) {
    return new McpAuthorizationError({
      server,
      tool,
      reason: 'needs-auth',
      message: `${what} cannot run: ${appWideMessage(server)}`,
    });
  }
  if (state === 'needs-auth') {
    return new McpAuthorizationError({
      server,
      tool,
      reason: 'needs-auth',
      authorizationUrl,
      message:
        `${what} cannot run: MCP server "${server}" needs the user to sign in first` +
        (authorizationUrl === undefined ? '.' : ` (${authorizationUrl}).`),
    });
  }
  const cause = error?.message;
  const why =
    state === 'closed'
      ? 'the toolbox was closed'
      : state === 'reconnecting'
        ? `it is reconnecting after: ${cause ?? 'a disconnect'}; retry shortly`
        : `it is ${state}${cause === undefined ? '' : ` (${cause})`}`;
  return new McpConnectionError({
    server,
    ...(tool === undefined ? {} : { tool }),
    message: `${what} cannot run: MCP server "${server}" is not connected; ${why}.`,
  });
}
