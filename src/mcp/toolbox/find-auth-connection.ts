import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { McpAuthorizationError } from '../../errors/mcp-authorization-error.ts';
import { isMcpOAuth } from '../auth/create-mcp-oauth.ts';
import type { McpServerConnection } from '../connection/server-connection.ts';
import type { McpServerConfig } from '../types.ts';

/**
 * Which connection a sign-in callback belongs to: the named server of this
 * toolbox, else the per-user server whose started sign-in `state` identifies
 * (for this user), else the app-wide server whose pending sign-in has that
 * `state`. A callback without `state` is refused: guessing "the only server
 * waiting" would let anyone's code finish a sign-in that serves every user.
 * A per-user toolbox never finishes a shared server's sign-in. Throws
 * {@link InvalidArgumentError} for an unknown or shared server and
 * {@link McpAuthorizationError} (`invalid-state`) for a missing or unknown
 * `state`. Internal to `McpToolbox.finishAuth`.
 *
 * @example
 * ```ts
 * const connection = await findAuthConnection({ own, borrowed, perUser, servers, userId, server, state });
 * ```
 */
export async function findAuthConnection({
  own,
  borrowed,
  perUser: perUserNames,
  servers,
  userId,
  server,
  state,
}: {
  /** The toolbox's own connections. */
  own: readonly McpServerConnection[];
  /** The shared connections it borrows (a per-user toolbox). */
  borrowed: readonly McpServerConnection[];
  /** Names of the servers that sign in per user. */
  perUser: ReadonlySet<string>;
  /** Every server's config, by name. */
  servers: Record<string, McpServerConfig>;
  /** The toolbox's user (per-user toolboxes). */
  userId: string | undefined;
  /** The server the app named, if any. */
  server: string | undefined;
  /** The callback's `state`, if any. */
  state: string | undefined;
}): Promise<McpServerConnection> {
  if (server !== undefined) {
    const found = own.find(connection => connection.name === server);
    if (found !== undefined) return found;
    const shared = borrowed.some(connection => connection.name === server);
    const hint = shared
      ? ' It signs in once for the whole app: call finishAuth on the toolbox connectMcpServers() ' +
        "returned, from a route only the app's administrators reach."
      : perUserNames.has(server)
        ? ' It signs in per user: call finishAuth on toolbox.forUser({ userId }).'
        : '';
    throw new InvalidArgumentError({
      argument: 'server',
      value: server,
      message: `no MCP server "${server}" ${shared ? 'of this user ' : ''}in this toolbox.${hint}`,
    });
  }
  const refuse = (why: string) =>
    new McpAuthorizationError({
      server: own.map(connection => connection.name).join(',') || '*',
      reason: 'invalid-state',
      message: `Cannot finish signing in: ${why}. Start the sign-in again.`,
    });
  if (typeof state !== 'string' || state === '') throw refuse('the callback has no `state`');
  for (const connection of own) {
    const auth = configAuth(servers[connection.name]!);
    if (!isMcpOAuth(auth) || userId === undefined) continue;
    const name = await auth.callbackServer({ userId, state });
    if (name === connection.name) return connection;
  }
  const appWide = own.find(
    connection => !perUserNames.has(connection.name) && connection.startedWith(state),
  );
  if (appWide !== undefined) return appWide;
  throw refuse(
    'this sign-in is unknown, finished, expired or was started by another user or toolbox',
  );
}

/** A server config's `auth`, if it has one. */
export function configAuth(config: McpServerConfig): unknown {
  return 'auth' in config ? config.auth : undefined;
}
