import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { type McpServerConfig, createMcpOAuth } from 'ai-toolbelt/mcp';
import { type Storage, createStorage } from 'unstorage';
import { appUrl } from './same-origin';

/** What {@link startNotesSignIn} set up. */
export type NotesSignIn = {
  /** `{ notes: { url, auth } }` to add to the toolbox's servers (empty when off). */
  servers: Record<string, McpServerConfig>;
  /** Stops the notes server. */
  close(): Promise<void>;
};

/**
 * Starts the bundled notes server (an MCP server that needs sign-in, with
 * its own OAuth authorization server; `../hono-server/mcp-servers`) as a
 * child process, and the per-user sign-in for it: tokens in the app's shared
 * `unstorage` Storage (Redis with `REDIS_URL`, so every instance knows a
 * browser's sign-in; memory without), encrypted with `MCP_TOKEN_KEY`, which a
 * shared store requires. `NOTES_MCP=off` leaves it out.
 *
 * @example
 * ```ts
 * const notes = await startNotesSignIn({ store });
 * const toolbox = await connectMcpServers({ servers: { ...servers, ...notes.servers } });
 * ```
 */
export async function startNotesSignIn({
  store,
}: {
  /** The app's shared store (`storeFromEnv()`); memory when undefined. */
  store?: Storage | undefined;
} = {}): Promise<NotesSignIn> {
  if (process.env.NOTES_MCP === 'off') return { servers: {}, close: async () => {} };
  const encryptionKey = process.env.MCP_TOKEN_KEY;
  // createMcpOAuth refuses plain tokens in a shared store; say what to set before anything starts.
  if (store !== undefined && !encryptionKey) {
    throw new Error(
      'REDIS_URL is set but MCP_TOKEN_KEY is not: set MCP_TOKEN_KEY (32+ characters, e.g. `openssl rand -base64 32`) to encrypt the MCP sign-in tokens kept in Redis, or NOTES_MCP=off.',
    );
  }
  // Before the child starts: a key it refuses leaves nothing running.
  const oauth = createMcpOAuth({
    store: store ?? createStorage(),
    // Configuration only (PUBLIC_URL, else 127.0.0.1 at Next's port), never a request's Host:
    // read when a sign-in starts, once Next has set PORT.
    redirectUrl: () => new URL('/api/mcp/callback', appUrl()),
    clientName: 'ai-toolbelt Next.js example',
    ...(encryptionKey ? { encryptionKey } : {}),
  });
  // turbopackIgnore: a run-time path, not a module of the app.
  const script = resolve(/* turbopackIgnore: true */ '../hono-server/mcp-servers/notes-server.ts');
  // Only what it reads, never this process's environment: that holds the model key, the token
  // and sandbox keys and REDIS_URL, none of which the notes server needs. Its own port (not
  // Next's PORT); it exits when our end of its stdin closes.
  const child = spawn(process.execPath, [script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: {
      ...(process.env.PATH ? { PATH: process.env.PATH } : {}),
      ...(process.env.CHALLENGE_SCOPE ? { CHALLENGE_SCOPE: process.env.CHALLENGE_SCOPE } : {}),
      NOTES_PORT: '0',
      NOTES_EXIT_WITH_STDIN: '1',
      // Not a secret, and Next's types require it in an environment.
      NODE_ENV: process.env.NODE_ENV,
    },
  });
  const url = await firstUrl(child);
  return {
    servers: { notes: { url, auth: oauth } },
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise(done => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// The server prints {"url": ...} once it listens.
async function firstUrl(child: ChildProcess): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', code => reject(new Error(`the notes server exited (${code})`))),
  );
  const line = await Promise.race([new Promise<string>(done => lines.once('line', done)), exited]);
  lines.close();
  return (JSON.parse(line) as { url: string }).url;
}
