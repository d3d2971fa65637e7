import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { McpAuthorizationError } from '../errors/mcp-authorization-error.ts';
import { isMcpOAuth } from './auth/create-mcp-oauth.ts';
import type { McpServerConnection } from './server-connection.ts';
import type { McpServerConfig } from './types.ts';

/**
 * Which connection a sign-in callback belongs to: the named server, else the
 * per-user server whose pending sign-in `state` identifies (for this user),
 * else the only server waiting for a sign-in. Throws
 * {@link InvalidArgumentError} for an unknown or ambiguous server and
 * {@link McpAuthorizationError} (`invalid-state`) for a `state` no per-user
 * server knows. Internal to `McpToolbox.finishAuth`.
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
  const candidates = [...own, ...borrowed];
  if (server !== undefined) {
    const found = candidates.find(connection => connection.name === server);
    if (found !== undefined) return found;
    const hint = perUserNames.has(server)
      ? ' It signs in per user: call finishAuth on toolbox.forUser({ userId }).'
      : '';
    throw new InvalidArgumentError({
      argument: 'server',
      value: server,
      message: `no MCP server "${server}" in this toolbox.${hint}`,
    });
  }
  for (const connection of own) {
    const auth = configAuth(servers[connection.name]!);
    if (!isMcpOAuth(auth) || userId === undefined || state === undefined) continue;
    const name = await auth.callbackServer({ userId, state });
    if (name === connection.name) return connection;
  }
  const perUser = own.filter(connection => perUserNames.has(connection.name));
  if (state !== undefined && perUser.length > 0) {
    throw new McpAuthorizationError({
      server: perUser.map(connection => connection.name).join(','),
      reason: 'invalid-state',
      message:
        'Cannot finish signing in: this sign-in is unknown, finished, expired or was started ' +
        'by another user. Start the sign-in again.',
    });
  }
  const waiting = candidates.filter(connection => connection.state === 'needs-auth');
  if (waiting.length === 1) return waiting[0]!;
  throw new InvalidArgumentError({
    argument: 'server',
    value: server,
    message:
      'name the server: the `state` does not identify a sign-in of this user ' +
      `(${waiting.length} servers wait for one).`,
  });
}

/** A server config's `auth`, if it has one. */
export function configAuth(config: McpServerConfig): unknown {
  return 'auth' in config ? config.auth : undefined;
}
