import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpAuthorizationError } from '../../errors/mcp-authorization-error.ts';
import { McpBlockedAddressError } from '../../errors/mcp-blocked-address-error.ts';
import { AddressPolicy } from './address-policy.ts';
import { type McpOAuth, isMcpOAuth } from './create-mcp-oauth.ts';
import { describeFailure, type SignInFailure, signInFetch } from './sign-in-fetch.ts';
import type { StoredOAuthProvider } from './stored-oauth-provider.ts';

/** What a server's `auth` may be: an SDK provider (one identity for everybody) or per-user sign-in. */
export type McpServerAuth = OAuthClientProvider | McpOAuth;

/**
 * The sign-in side of one connection: the provider handed to the SDK's HTTP
 * transport (its authorization URL captured, so the server can report
 * `needs-auth` with it), the fetch of the transport and of sign-in (see
 * {@link signInFetch}: other origins only at public addresses, upstream error
 * bodies withheld; a 403 `insufficient_scope` makes the next authorization
 * ask for more scope), and the code exchange of the callback. Internal to
 * `connectMcpServers`.
 *
 * @example
 * ```ts
 * const auth = new ConnectionAuth({ server: 'github', serverUrl, auth: oauth, userId, onAuthorizationUrl });
 * new StreamableHTTPClientTransport(url, { authProvider: auth.provider, fetch: auth.fetch });
 * ```
 */
export class ConnectionAuth {
  readonly provider: OAuthClientProvider;
  readonly fetch: FetchLike;
  private readonly server: string;
  private readonly serverUrl: string;
  private readonly auth: McpServerAuth;
  private readonly userId: string | undefined;
  private pendingAuthorizationUrl: string | undefined;
  private lastFailure: SignInFailure | undefined;

  constructor({
    server,
    serverUrl,
    auth,
    userId,
    allowedAddresses,
    onAuthorizationUrl,
  }: {
    /** The server's name. */
    server: string;
    /** Its MCP endpoint. */
    serverUrl: string;
    /** The server config's `auth`. */
    auth: McpServerAuth;
    /** The user, for per-user sign-in. */
    userId: string | undefined;
    /** Non-public addresses sign-in requests to other origins may reach (IPs or CIDR ranges). */
    allowedAddresses?: readonly string[] | undefined;
    /** Called with each authorization URL the SDK produces. */
    onAuthorizationUrl: (url: string) => void;
  }) {
    this.server = server;
    this.serverUrl = serverUrl;
    this.auth = auth;
    this.userId = userId;
    const capture = (url: URL): void => {
      this.pendingAuthorizationUrl = url.href;
      onAuthorizationUrl(url.href);
    };
    const guarded = signInFetch({
      server,
      serverUrl,
      policy: new AddressPolicy({ server, allowed: allowedAddresses }),
      onFailure: failure => (this.lastFailure = failure),
    });
    if (isMcpOAuth(auth)) {
      // An invariant, not bad input: the toolbox builds per-user servers' connections only in a
      // toolbox with a user (a process-wide one shows them as `per-user`).
      if (userId === undefined) throw new Error(`MCP server "${server}" signs in per user`);
      const stored = auth.provider({ userId, server, serverUrl, onRedirect: capture });
      this.provider = stored;
      this.fetch = stepUpFetch(stored, guarded);
    } else {
      this.provider = capturingProvider(auth, capture);
      this.fetch = guarded;
    }
  }

  /** The last authorization URL, while the user has not finished signing in. */
  get authorizationUrl(): string | undefined {
    return this.pendingAuthorizationUrl;
  }

  /** True when `state` is that of the pending app-wide sign-in (per-user ones are checked in the store). */
  startedWith(state: string | undefined): boolean {
    return !isMcpOAuth(this.auth) && sameState(pendingState(this.pendingAuthorizationUrl), state);
  }

  /** Exchanges the callback's code for tokens (saved by the provider). */
  async finish({ code, state }: { code: string; state?: string | undefined }): Promise<void> {
    const server = this.server;
    if (typeof code !== 'string' || code === '') {
      throw new McpAuthorizationError({
        server,
        reason: 'exchange-failed',
        message: `Cannot finish signing in to MCP server "${server}": the callback has no \`code\`.`,
      });
    }
    let provider = this.provider;
    let bound: StoredOAuthProvider | undefined;
    if (!isMcpOAuth(this.auth) && !this.startedWith(state)) {
      // One identity serves every user here: only the sign-in this process
      // started may finish, never a code someone brings along.
      throw new McpAuthorizationError({
        server,
        reason: 'invalid-state',
        message:
          `Cannot finish signing in to MCP server "${server}": ` +
          (typeof state !== 'string' || state === ''
            ? 'the callback has no `state`'
            : 'its `state` is not that of the sign-in this app started (unknown, finished or replaced)') +
          '. Start the sign-in again.',
      });
    }
    if (isMcpOAuth(this.auth)) {
      bound = await this.auth.providerForCallback({
        userId: this.userId as string,
        server,
        serverUrl: this.serverUrl,
        state: state as string,
      });
      provider = bound;
    }
    const { auth } = await import('@modelcontextprotocol/sdk/client/auth.js');
    this.lastFailure = undefined;
    try {
      const result = await auth(provider, {
        serverUrl: this.serverUrl,
        authorizationCode: code,
        fetchFn: this.fetch,
      });
      if (result !== 'AUTHORIZED') throw new Error(`the SDK answered ${result}`);
      this.pendingAuthorizationUrl = undefined;
    } catch (error) {
      // Callback pages show this message: it names the step and status, never the upstream's text.
      throw new McpAuthorizationError({
        server,
        reason: 'exchange-failed',
        cause: error,
        message: `Signing in to MCP server "${server}" failed: ${this.whatFailed(error)}. Start the sign-in again.`,
      });
    } finally {
      await bound?.consumeFlow();
    }
  }

  private whatFailed(error: unknown): string {
    if (McpBlockedAddressError.isInstance(error)) return error.message;
    if (this.lastFailure !== undefined)
      return `the server answered ${describeFailure(this.lastFailure)}`;
    if (error instanceof TypeError) return 'the authorization server could not be reached';
    return "the authorization server's answer could not be used (see `cause`)";
  }
}

// The `state` of an authorization URL.
function pendingState(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  return new URL(url).searchParams.get('state') ?? undefined;
}

function sameState(expected: string | undefined, given: string | undefined): boolean {
  if (!expected || typeof given !== 'string' || given === '') return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(expected), digest(given));
}

// Wraps an app's own provider so its authorization URL is seen too, and gives
// it a random `state` when it has none (a callback is accepted only with the
// state of the pending sign-in). Every other member is the provider's own
// (bound, so getters and `this` work).
function capturingProvider(
  provider: OAuthClientProvider,
  capture: (url: URL) => void,
): OAuthClientProvider {
  return new Proxy(provider, {
    get(target, property) {
      if (property === 'redirectToAuthorization') {
        return async (url: URL) => {
          capture(url);
          await target.redirectToAuthorization(url);
        };
      }
      if (property === 'state' && typeof target.state !== 'function') {
        return async () => randomBytes(24).toString('base64url');
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

// The SDK retries a 403 `insufficient_scope` by calling auth() with the new
// scope, but auth() refreshes first when it has a refresh token, and a
// refresh keeps the old scope. Telling the provider the required scope makes
// it hold back the refresh token, so auth() starts a new authorization.
function stepUpFetch(provider: StoredOAuthProvider, inner: FetchLike): FetchLike {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.status === 403) {
      const header = response.headers.get('www-authenticate') ?? '';
      const scope = /scope="([^"]*)"/i.exec(header)?.[1];
      if (/error="?insufficient_scope/i.test(header) && scope) provider.requireScope(scope);
    }
    return response;
  };
}
