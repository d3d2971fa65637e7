// auth/: MCP's OAuth for servers that need sign-in: per-user tokens in a sealed store, the sign-in
// flow, and the address policy for every request it makes.
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { McpAuthorizationError } from '../../errors/mcp-authorization-error.ts';
import {
  SealedStore,
  type SealedStoreStorage,
  type SealingSecret,
} from '../../util/sealing/sealed-store.ts';
import { sealingKeys } from '../../util/sealing/sealing-keys.ts';
import {
  type FlowRecord,
  StoredOAuthProvider,
  type StoredOAuthSettings,
  flowSegments,
} from './stored-oauth-provider.ts';

const marker = Symbol.for('ai-toolbelt.mcp-oauth');

/** Options of {@link createMcpOAuth}. */
export type McpOAuthOptions = {
  /**
   * Where tokens, client registrations and started sign-ins are kept: an
   * `unstorage` Storage (`createStorage()` with any driver: memory, Redis,
   * Vercel KV, ...). The same instance can serve the embedding cache's `store`.
   */
  store: SealedStoreStorage;
  /**
   * Your callback route, e.g. `https://app.example.com/api/mcp/callback`
   * (registered with each authorization server); a function when the URL is
   * known only once the app listens.
   */
  redirectUrl: string | URL | (() => string | URL);
  /**
   * Encrypts every value at rest (AES-256-GCM): 32+ bytes of secret, e.g.
   * `openssl rand -base64 32`. A list rotates keys: the first seals, all
   * open (values are resealed with the first as they are written). Required
   * unless `store` is unstorage's memory driver; `false` stores plain JSON on
   * purpose (one warning per process).
   */
  encryptionKey?: SealingSecret | readonly SealingSecret[] | false;
  /** Your app's name on consent screens. */
  clientName?: string;
  /** Scope to ask for when neither the server's 401 nor its metadata names one. */
  scope?: string;
  /** More client metadata for dynamic registration (`logo_uri`, `token_endpoint_auth_method`, ...). */
  clientMetadata?: Partial<OAuthClientMetadata>;
  /** An HTTPS URL of your client metadata document, used as `client_id` where servers support it (no registration). */
  clientMetadataUrl?: string;
  /** Clients registered by hand, by server name (`{ client_id, client_secret }`): no dynamic registration there. */
  clients?: Record<string, OAuthClientInformationMixed>;
  /** Key prefix in the store (`app/mcp` is stored as `app:mcp`, as unstorage does). */
  prefix?: string;
  /** How long a started sign-in stays valid. */
  flowTtlMs?: number;
};

/**
 * Sign-in to MCP servers for a multi-user web app; pass it as a server's
 * `auth` and each user's toolbox (`toolbox.forUser({ userId })`) signs in on
 * its own. Created by {@link createMcpOAuth}.
 */
export type McpOAuth = {
  readonly [marker]: true;
  /** True when the store's values are encrypted. */
  readonly encrypted: boolean;
  /** The SDK `OAuthClientProvider` of one user and server (connectMcpServers makes these itself). */
  provider(options: {
    /** Whose sign-in. */
    userId: string;
    /** The server's name. */
    server: string;
    /** Its MCP endpoint. */
    serverUrl: string | URL;
    /** Receives the authorization URL when the user has to sign in. */
    onRedirect?: (url: URL) => void | Promise<void>;
  }): StoredOAuthProvider;
  /** Forgets a user's tokens: for one server URL, or every server. */
  signOut(options: {
    /** Whose tokens. */
    userId: string;
    /** One server's MCP endpoint; all servers when omitted. */
    serverUrl?: string | URL;
  }): Promise<void>;
  /** The server a callback's `state` was started for, when it is this user's and still valid. */
  callbackServer(options: {
    /** Whose callback. */
    userId: string;
    /** The `state` query parameter of the callback. */
    state: string;
  }): Promise<string | undefined>;
  /**
   * The provider bound to a started sign-in, for the code exchange, after
   * checking the callback's `state` belongs to this user and server. Throws
   * {@link McpAuthorizationError} (`invalid-state`) otherwise.
   */
  providerForCallback(options: {
    /** Whose callback (from your session, never from the request). */
    userId: string;
    /** The server's name. */
    server: string;
    /** Its MCP endpoint. */
    serverUrl: string | URL;
    /** The `state` query parameter of the callback. */
    state: string;
  }): Promise<StoredOAuthProvider>;
};

/**
 * Creates the OAuth sign-in for MCP servers that web apps need: per user and
 * server, tokens (with refresh) and the client they belong to live in an
 * `unstorage` Storage, keyed by a hash of the user id, optionally encrypted;
 * dynamic client registration, PKCE, discovery and scope step-up come from
 * the MCP SDK. Give it to HTTP servers as `auth`; the callback route calls
 * `toolbox.finishAuth({ code, state })`.
 *
 * @example
 * ```ts
 * import { createStorage } from 'unstorage';
 * const oauth = createMcpOAuth({
 *   store: createStorage(),
 *   redirectUrl: 'https://app.example.com/api/mcp/callback',
 *   encryptionKey: process.env.MCP_TOKEN_KEY,
 * });
 * const toolbox = await connectMcpServers({ servers: { github: { url: 'https://api.githubcopilot.com/mcp/', auth: oauth } } });
 * ```
 */
export function createMcpOAuth({
  store,
  redirectUrl,
  encryptionKey,
  clientName = 'ai-toolbelt',
  scope,
  clientMetadata = {},
  clientMetadataUrl,
  clients = {},
  prefix = 'ai-toolbelt:mcp-auth',
  flowTtlMs = 10 * 60_000,
}: McpOAuthOptions): McpOAuth {
  const redirect = (): string => {
    const value = typeof redirectUrl === 'function' ? redirectUrl() : redirectUrl;
    try {
      return new URL(value).href;
    } catch {
      throw new InvalidArgumentError({
        argument: 'redirectUrl',
        value,
        message: 'expected the absolute URL of your OAuth callback route.',
      });
    }
  };
  if (typeof redirectUrl !== 'function') redirect();
  if (!(flowTtlMs > 0)) {
    throw new InvalidArgumentError({
      argument: 'flowTtlMs',
      value: flowTtlMs,
      message: 'must be a positive number.',
    });
  }
  const sealed = new SealedStore({
    store,
    prefix,
    purpose: 'mcp-auth',
    keys: sealingKeys({
      store,
      encryptionKey,
      option: 'encryptionKey',
      records: 'MCP sign-ins (access and refresh tokens, client secrets)',
    }),
    keyOption: 'encryptionKey',
  });
  // Sign-ins that are never finished would pile up in stores that ignore `ttl`. The sweep
  // reads every started sign-in: it runs in the background, so a user's sign-in neither
  // waits for it nor fails with it (its store error becomes a process warning).
  let sweptAt = Number.NEGATIVE_INFINITY;
  const sweepFlows = (): void => {
    if (Date.now() - sweptAt < flowTtlMs) return;
    sweptAt = Date.now();
    sealed.removeExpired(['flow']).catch((error: unknown) => {
      const why = error instanceof Error ? error.message : String(error);
      process.emitWarning(`Removing expired MCP sign-ins from the store failed: ${why}`, {
        type: 'McpOAuthSweepWarning',
      });
    });
  };
  const settings: StoredOAuthSettings = {
    store: sealed,
    get redirectUrl() {
      return redirect();
    },
    clientMetadataUrl,
    clients,
    flowTtlMs,
    sweepFlows,
    get clientMetadata() {
      return {
        client_name: clientName,
        redirect_uris: [redirect()],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        ...(scope === undefined ? {} : { scope }),
        ...clientMetadata,
      };
    },
  };
  const provider: McpOAuth['provider'] = ({ userId, server, serverUrl, onRedirect }) => {
    assertUserId(userId);
    return new StoredOAuthProvider({
      settings,
      userId,
      server,
      serverUrl: String(serverUrl),
      ...(onRedirect === undefined ? {} : { onRedirect }),
    });
  };
  return {
    [marker]: true,
    encrypted: sealed.encrypted,
    provider,
    async signOut({ userId, serverUrl }) {
      assertUserId(userId);
      const user = { id: userId };
      if (serverUrl === undefined) await sealed.removeAll(['user', user]);
      else await sealed.remove(['user', user, 'server', { id: new URL(serverUrl).href }]);
    },
    async callbackServer({ userId, state }) {
      assertUserId(userId);
      if (typeof state !== 'string' || state === '') return undefined;
      const record = await sealed.get<FlowRecord>(flowSegments(state));
      if (record === undefined || !(await sealed.ids(userId)).includes(record.user))
        return undefined;
      return Date.now() - record.createdAt > flowTtlMs ? undefined : record.server;
    },
    async providerForCallback({ userId, server, serverUrl, state }) {
      assertUserId(userId);
      const invalid = (why: string) =>
        new McpAuthorizationError({
          server,
          reason: 'invalid-state',
          message: `Cannot finish signing in to MCP server "${server}": ${why}. Start the sign-in again.`,
        });
      if (typeof state !== 'string' || state === '') throw invalid('the callback has no `state`');
      const record = await sealed.get<FlowRecord>(flowSegments(state));
      if (record === undefined) throw invalid('this sign-in is unknown, finished or expired');
      if (Date.now() - record.createdAt > flowTtlMs) throw invalid('this sign-in expired');
      if (!(await sealed.ids(userId)).includes(record.user))
        throw invalid('it was started by another user');
      const serverIds = await sealed.ids(new URL(serverUrl).href);
      if (record.server !== server || !serverIds.includes(record.serverId))
        throw invalid(`it was started for MCP server "${record.server}"`);
      return new StoredOAuthProvider({
        settings,
        userId,
        server,
        serverUrl: String(serverUrl),
        flow: { state, record },
      });
    },
  };
}

/** True for the object {@link createMcpOAuth} returns. */
export function isMcpOAuth(value: unknown): value is McpOAuth {
  return (
    value != null &&
    typeof value === 'object' &&
    (value as Record<symbol, unknown>)[marker] === true
  );
}

function assertUserId(userId: unknown): asserts userId is string {
  if (typeof userId !== 'string' || userId === '') {
    throw new InvalidArgumentError({
      argument: 'userId',
      value: userId,
      message: 'expected a non-empty string identifying the signed-in user.',
    });
  }
}
