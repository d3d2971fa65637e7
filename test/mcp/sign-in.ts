import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { createStorage, type Storage } from 'unstorage';
import { createMcpOAuth, type McpOAuth } from '../../src/mcp/index.ts';

export {
  type NotesServer,
  startNotesServer,
} from '../../examples/hono-server/mcp-servers/notes-server.ts';

/** A fresh in-memory store and the web-app sign-in over it (encrypted). */
export function oauthInMemory(): { store: Storage; oauth: McpOAuth } {
  const store = createStorage();
  const oauth = createMcpOAuth({
    store,
    redirectUrl: 'http://127.0.0.1:3000/api/mcp/callback',
    clientName: 'ai-toolbelt tests',
    encryptionKey: 'test-only-secret-0123456789abcdef0123456789',
  });
  return { store, oauth };
}

/**
 * Signs `user` in at an authorization URL, as the browser would: the notes
 * server approves `login=<user>` at once and redirects to the callback.
 */
export async function signIn(
  authorizationUrl: string | undefined,
  user: string,
): Promise<{ code: string; state: string }> {
  if (authorizationUrl === undefined) throw new Error('no authorization URL');
  const url = new URL(authorizationUrl);
  url.searchParams.set('login', user);
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (location === null) throw new Error(`no redirect (HTTP ${response.status})`);
  const callback = new URL(location);
  return { code: callback.searchParams.get('code')!, state: callback.searchParams.get('state')! };
}

/** Every raw value in the store, as JSON text. */
export async function rawStore(store: Storage): Promise<string> {
  const keys = await store.getKeys();
  const values = await Promise.all(keys.map(key => store.getItem(key)));
  return JSON.stringify(Object.fromEntries(keys.map((key, i) => [key, values[i]])));
}

/**
 * An app's own SDK provider (one identity for every user), kept in memory,
 * signing in with the authorization code flow. It has no `state()` of its own.
 */
export function appWideProvider(): OAuthClientProvider & { tokens(): OAuthTokens | undefined } {
  let client: OAuthClientInformationMixed | undefined;
  let tokens: OAuthTokens | undefined;
  let verifier = '';
  const redirectUrl = 'http://127.0.0.1:3000/admin/mcp/callback';
  return {
    redirectUrl,
    clientMetadata: {
      client_name: 'ai-toolbelt tests (app-wide)',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
    clientInformation: () => client,
    saveClientInformation: info => void (client = info),
    tokens: () => tokens,
    saveTokens: saved => void (tokens = saved),
    redirectToAuthorization: () => {},
    saveCodeVerifier: saved => void (verifier = saved),
    codeVerifier: () => verifier,
  };
}
