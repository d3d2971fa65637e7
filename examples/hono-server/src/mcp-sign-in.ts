import { type McpOAuth, type McpServerConfig, createMcpOAuth } from 'ai-toolbelt/mcp';
import { type Storage, createStorage } from 'unstorage';
import { startNotesServer } from '../mcp-servers/notes-server.ts';

/** What {@link startNotesSignIn} set up. */
export type NotesSignIn = {
  /** `{ notes: { url, auth } }` to add to the toolbox's servers (empty when off). */
  servers: Record<string, McpServerConfig>;
  /** The sign-in, when on. */
  oauth?: McpOAuth;
  /** Tells the sign-in where the app listens (its callback is `<url>/api/mcp/callback`). */
  setAppUrl(url: string): void;
  /** Stops the bundled notes server. */
  close(): Promise<void>;
};

/**
 * Starts the bundled notes server (an MCP server that needs sign-in, with
 * its own OAuth authorization server) and the per-user sign-in for it:
 * tokens in an `unstorage` Storage (the one that keeps tool embeddings when
 * REDIS_URL is set, memory otherwise), encrypted when `MCP_TOKEN_KEY` is set.
 *
 * @example
 * ```ts
 * const signIn = await startNotesSignIn({ disabled: process.env.NOTES_MCP === 'off' });
 * const toolbox = await connectMcpServers({ servers: { ...servers, ...signIn.servers } });
 * ```
 */
export async function startNotesSignIn({
  disabled = false,
  encryptionKey,
  store = createStorage(),
}: {
  /** Where tokens and client registrations are kept (shared with the embedding cache). */
  store?: Storage;
  /** Leave the notes server out (`NOTES_MCP=off`). */
  disabled?: boolean;
  /** Encrypts tokens at rest (32+ characters). */
  encryptionKey?: string | undefined;
} = {}): Promise<NotesSignIn> {
  if (disabled) return { servers: {}, setAppUrl: () => {}, close: async () => {} };
  const notes = await startNotesServer({ port: 0 });
  let appUrl: string | undefined;
  const oauth = createMcpOAuth({
    store,
    redirectUrl: () => {
      if (appUrl === undefined) throw new Error('the app is not listening yet');
      return new URL('/api/mcp/callback', appUrl);
    },
    clientName: 'ai-toolbelt Hono example',
    ...(encryptionKey ? { encryptionKey } : {}),
  });
  return {
    servers: { notes: { url: notes.url, auth: oauth } },
    oauth,
    setAppUrl: url => (appUrl = url),
    close: () => notes.close(),
  };
}
