import { randomBytes } from 'node:crypto';
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { SealedKeySegment, SealedStore } from '../../util/sealing/sealed-store.ts';

/** Settings shared by every provider of one `createMcpOAuth()`. */
export type StoredOAuthSettings = {
  store: SealedStore;
  redirectUrl: string;
  clientMetadata: OAuthClientMetadata;
  clientMetadataUrl: string | undefined;
  /** Pre-registered client per server name. */
  clients: Record<string, OAuthClientInformationMixed>;
  flowTtlMs: number;
  /** Deletes expired started sign-ins now and then, in the background (drivers such as memory ignore `ttl`). */
  sweepFlows: () => void;
};

/** One user's sign-in to one server, as stored. */
type UserRecord = { tokens: OAuthTokens; client?: OAuthClientInformationMixed; scope?: string };

/** A started sign-in, keyed by its `state`, until the callback finishes it. */
export type FlowRecord = {
  /** `store.id(userId)` (under the key that wrote it: compare with `store.ids()`). */
  user: string;
  /** Server name and `store.id(serverUrl)`. */
  server: string;
  serverId: string;
  verifier: string;
  /** The client the authorization request was made for. */
  client?: OAuthClientInformationMixed;
  scope?: string;
  createdAt: number;
};

/**
 * The MCP SDK's `OAuthClientProvider` for one user and one server, keeping
 * everything in a {@link SealedStore}: the user's tokens (and the client they
 * were issued to) under the user, client registrations and discovery
 * metadata per server (they are the app's, not the user's), and each started
 * sign-in under its random `state`, so the callback can be checked against
 * the user and server that started it. PKCE comes from the SDK. Created by
 * `createMcpOAuth().provider()`.
 *
 * @example
 * ```ts
 * const provider = new StoredOAuthProvider({ settings, userId: 'u1', server: 'github', serverUrl, onRedirect });
 * const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
 * ```
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  private readonly settings: StoredOAuthSettings;
  private readonly store: SealedStore;
  private readonly server: string;
  private readonly userId: string;
  private readonly onRedirect: (url: URL) => void | Promise<void>;
  private readonly flowState: string | undefined;
  private flow: FlowRecord | undefined;
  private pending: { state: string; verifier?: string } | undefined;
  private lastClient: OAuthClientInformationMixed | undefined;
  private requiredScope: string | undefined;

  constructor(options: {
    /** Shared settings. */
    settings: StoredOAuthSettings;
    /** Whose tokens. */
    userId: string;
    /** The server's name. */
    server: string;
    /** Its MCP endpoint. */
    serverUrl: string;
    /** Receives the authorization URL when the user has to sign in. */
    onRedirect?: (url: URL) => void | Promise<void>;
    /** Binds the provider to a started sign-in (for the code exchange). */
    flow?: { state: string; record: FlowRecord };
  }) {
    this.settings = options.settings;
    this.store = options.settings.store;
    this.server = options.server;
    this.userId = options.userId;
    this.onRedirect = options.onRedirect ?? (() => {});
    this.flowState = options.flow?.state;
    this.flow = options.flow?.record;
    this.serverUrl = new URL(options.serverUrl).href;
  }

  /** The server's MCP endpoint, normalised. */
  readonly serverUrl: string;

  get redirectUrl(): string {
    return this.settings.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return this.settings.clientMetadata;
  }

  get clientMetadataUrl(): string | undefined {
    return this.settings.clientMetadataUrl;
  }

  /**
   * Asks for `scope` at the next authorization (a 403 `insufficient_scope`):
   * until tokens covering it are saved, `tokens()` hides the refresh token so
   * the SDK starts a new authorization instead of refreshing the old scope.
   */
  requireScope(scope: string): void {
    this.requiredScope = scope;
  }

  async state(): Promise<string> {
    const state = randomBytes(24).toString('base64url');
    this.pending = { state };
    return state;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const client =
      this.flow?.client ??
      this.settings.clients[this.server] ??
      (await this.record())?.client ??
      (await this.store.get<OAuthClientInformationMixed>(this.serverSegments('client')));
    this.lastClient = client;
    return client;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    this.lastClient = info;
    if (this.settings.clients[this.server] !== undefined) return; // pre-registered: nothing to save
    await this.store.set(this.serverSegments('client'), info);
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    const record = await this.record();
    if (record === undefined) return undefined;
    const required = this.requiredScope;
    if (required !== undefined && !covers(record.tokens.scope ?? record.scope, required)) {
      const { refresh_token: _hidden, ...rest } = record.tokens;
      return rest;
    }
    return record.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const previous = await this.record();
    const client = this.flow?.client ?? this.lastClient ?? previous?.client;
    const scope = tokens.scope ?? this.flow?.scope ?? previous?.scope;
    const record: UserRecord = {
      tokens,
      ...(client === undefined ? {} : { client }),
      ...(scope === undefined ? {} : { scope }),
    };
    await this.store.set(this.userSegments(), record);
    if (this.requiredScope !== undefined && covers(scope, this.requiredScope))
      this.requiredScope = undefined;
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    if (this.pending !== undefined) this.pending.verifier = codeVerifier;
  }

  async codeVerifier(): Promise<string> {
    const verifier = this.flow?.verifier;
    if (verifier === undefined) {
      throw new Error(`No sign-in to MCP server "${this.server}" is waiting for this callback.`);
    }
    return verifier;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const pending = this.pending;
    this.pending = undefined;
    if (pending?.verifier !== undefined) {
      const scope = authorizationUrl.searchParams.get('scope') ?? undefined;
      const record: FlowRecord = {
        user: await this.store.id(this.userId),
        server: this.server,
        serverId: await this.store.id(this.serverUrl),
        verifier: pending.verifier,
        ...(this.lastClient === undefined ? {} : { client: this.lastClient }),
        ...(scope === undefined ? {} : { scope }),
        createdAt: Date.now(),
      };
      await this.store.set(flowSegments(pending.state), record, {
        ttlMs: this.settings.flowTtlMs,
      });
      this.settings.sweepFlows();
    }
    await this.onRedirect(authorizationUrl);
  }

  async invalidateCredentials(
    scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery',
  ): Promise<void> {
    const removals: Promise<void>[] = [];
    if (scope === 'all' || scope === 'tokens' || scope === 'client')
      removals.push(this.store.remove(this.userSegments()));
    if (scope === 'all' || scope === 'client')
      removals.push(this.store.remove(this.serverSegments('client')));
    if (scope === 'all' || scope === 'discovery')
      removals.push(this.store.remove(this.serverSegments('discovery')));
    if ((scope === 'all' || scope === 'verifier') && this.flowState !== undefined) {
      removals.push(this.store.remove(flowSegments(this.flowState)));
      this.flow = undefined;
    }
    await Promise.all(removals);
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.store.set(this.serverSegments('discovery'), state);
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return await this.store.get<OAuthDiscoveryState>(this.serverSegments('discovery'));
  }

  /** Deletes the started sign-in this provider was bound to (after the exchange). */
  async consumeFlow(): Promise<void> {
    if (this.flowState === undefined) return;
    await this.store.remove(flowSegments(this.flowState));
  }

  /** Forgets this user's tokens for this server. */
  async signOut(): Promise<void> {
    await this.store.remove(this.userSegments());
  }

  private async record(): Promise<UserRecord | undefined> {
    const record = await this.store.get<UserRecord>(this.userSegments());
    return typeof record?.tokens?.access_token === 'string' ? record : undefined;
  }

  private userSegments(): SealedKeySegment[] {
    return ['user', { id: this.userId }, 'server', { id: this.serverUrl }];
  }

  // Client registrations and discovery metadata are the app's, per server, not the user's.
  private serverSegments(kind: 'client' | 'discovery'): SealedKeySegment[] {
    return [kind, { id: this.serverUrl }];
  }

  /** For messages: never includes tokens. */
  toString(): string {
    return `StoredOAuthProvider(${this.server}, user ${this.userId.length} chars)`;
  }
}

/** The storage segments of a started sign-in. */
export function flowSegments(state: string): SealedKeySegment[] {
  return ['flow', { id: `state:${state}` }];
}

function covers(granted: string | undefined, required: string): boolean {
  const have = new Set((granted ?? '').split(' ').filter(Boolean));
  return required
    .split(' ')
    .filter(Boolean)
    .every(scope => have.has(scope));
}
