import { McpAuthorizationError } from '../../errors/mcp-authorization-error.ts';
import { ConnectionAuth, type McpServerAuth } from './connection-auth.ts';
import { isMcpOAuth } from './create-mcp-oauth.ts';

/** What sign-in reads of an HTTP server's config (kept here so auth/ does not depend on ../types.ts). */
type SignInConfig = {
  url: string | URL;
  auth: McpServerAuth | undefined;
  authAllowedAddresses?: readonly string[] | undefined;
};

/**
 * The sign-in state of one server connection: its {@link ConnectionAuth}
 * (none for servers without `auth`), the access token the server last
 * refused (a different one in the store means someone signed in since), the
 * `needs-auth` error, and the app's `onAuthorizationRequired` hook. Internal
 * to `McpServerConnection`.
 *
 * @example
 * ```ts
 * const signIn = new ServerSignIn({ server: 'github', config, userId, onAuthorizationRequired });
 * const { error, url } = await signIn.refused(cause);
 * ```
 */
export class ServerSignIn {
  /** What the transport signs in with; undefined for a server without `auth`. */
  readonly auth: ConnectionAuth | undefined;
  /**
   * One sign-in for every user (an SDK provider). Its URL's `state` is all a
   * callback is checked against, so whoever opens it signs the whole app in:
   * errors (which every user's model and page may see) leave it out, and
   * only the app's own toolbox shows it.
   */
  readonly appWide: boolean;
  private server: string;
  private onAuthorizationRequired: ((url: string | undefined) => void) | undefined;
  // The access token the server last refused; a different one in the store means someone signed in.
  private refusedToken: string | undefined;

  constructor(options: {
    /** The server's name. */
    server: string;
    /** Its config (an `McpServerConfig`); only an HTTP config with `auth` signs in. */
    config: SignInConfig | object;
    /** The user, for servers with per-user `auth`. */
    userId: string | undefined;
    /** Told when the user has to sign in. */
    onAuthorizationRequired: ((url: string | undefined) => void) | undefined;
  }) {
    this.server = options.server;
    this.onAuthorizationRequired = options.onAuthorizationRequired;
    const config = options.config as Partial<SignInConfig>;
    this.appWide = config.auth !== undefined && !isMcpOAuth(config.auth);
    if (config.auth !== undefined && config.url !== undefined) {
      this.auth = new ConnectionAuth({
        server: options.server,
        serverUrl: new URL(config.url).href,
        auth: config.auth,
        userId: options.userId,
        allowedAddresses: config.authAllowedAddresses,
        onAuthorizationUrl: () => {},
      });
    }
  }

  /** Where the user signs in, while a sign-in is pending. */
  get authorizationUrl(): string | undefined {
    return this.auth?.authorizationUrl;
  }

  /** True once the store holds an access token other than the one the server refused. */
  async signedInSince(): Promise<boolean> {
    const tokens = await this.auth?.provider.tokens();
    return tokens !== undefined && tokens.access_token !== this.refusedToken;
  }

  /** The auth to finish a sign-in with; throws {@link McpAuthorizationError} without `auth`. */
  required(): ConnectionAuth {
    if (this.auth === undefined) {
      throw new McpAuthorizationError({
        server: this.server,
        reason: 'no-auth',
        message: `MCP server "${this.server}" has no \`auth\`; there is no sign-in to finish.`,
      });
    }
    return this.auth;
  }

  /** Forgets the refused token (a sign-in just finished). */
  forgetRefused(): void {
    this.refusedToken = undefined;
  }

  /**
   * The server refused the user's token (or has none): remembers the token
   * and returns the `needs-auth` error (with the authorization URL when the
   * user signs in themselves).
   */
  async refused(
    cause: unknown,
  ): Promise<{ error: McpAuthorizationError; url: string | undefined }> {
    this.refusedToken = (await this.auth?.provider.tokens())?.access_token;
    const url = this.auth?.authorizationUrl;
    const shown = this.appWide ? undefined : url;
    const error = new McpAuthorizationError({
      server: this.server,
      reason: 'needs-auth',
      authorizationUrl: shown,
      cause,
      message: this.appWide
        ? appWideMessage(this.server)
        : `MCP server "${this.server}" needs the user to sign in` +
          (shown === undefined ? '.' : ` at ${shown}.`),
    });
    return { error, url };
  }

  /** Tells the app's hook that the user has to sign in. */
  announce(url: string | undefined): void {
    try {
      this.onAuthorizationRequired?.(url);
    } catch {
      // The app's hook must not break the connection's state.
    }
  }
}

/** What users are told while an app-wide sign-in is pending (never its URL). */
export function appWideMessage(server: string): string {
  return (
    `MCP server "${server}" needs the app's administrator to sign in (one sign-in serves every ` +
    'user); its tools come back once they have.'
  );
}
