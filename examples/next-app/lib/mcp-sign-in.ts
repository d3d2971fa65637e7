import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { type McpServerConfig, createMcpOAuth } from 'ai-toolbelt/mcp';
import { createStorage } from 'unstorage';
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
 * child process, and the per-user sign-in for it: tokens in an `unstorage`
 * Storage (memory here; Redis or Vercel KV in a deployment), encrypted when
 * `MCP_TOKEN_KEY` is set. `NOTES_MCP=off` leaves it out.
 *
 * @example
 * ```ts
 * const notes = await startNotesSignIn();
 * const toolbox = await connectMcpServers({ servers: { ...servers, ...notes.servers } });
 * ```
 */
export async function startNotesSignIn(): Promise<NotesSignIn> {
  if (process.env.NOTES_MCP === 'off') return { servers: {}, close: async () => {} };
  // turbopackIgnore: a run-time path, not a module of the app.
  const script = resolve(/* turbopackIgnore: true */ '../hono-server/mcp-servers/notes-server.ts');
  // Its own port (not Next's PORT); it exits when our end of its stdin closes.
  const { PORT: _nextPort, ...env } = process.env;
  const child = spawn(process.execPath, [script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...env, NOTES_PORT: '0', NOTES_EXIT_WITH_STDIN: '1' },
  });
  const url = await firstUrl(child);
  const oauth = createMcpOAuth({
    store: createStorage(),
    // Configuration only (PUBLIC_URL, else 127.0.0.1 at Next's port), never a request's Host:
    // read when a sign-in starts, once Next has set PORT.
    redirectUrl: () => new URL('/api/mcp/callback', appUrl()),
    clientName: 'ai-toolbelt Next.js example',
    ...(process.env.MCP_TOKEN_KEY ? { encryptionKey: process.env.MCP_TOKEN_KEY } : {}),
  });
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
