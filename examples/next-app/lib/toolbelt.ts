import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { createToolIndex } from 'ai-toolbelt';
import {
  connectMcpServers,
  McpElicitationBroker,
  type McpServerConfig,
  type McpToolbox,
} from 'ai-toolbelt/mcp';
import type { DockerSandbox } from 'ai-toolbelt/sandbox';
import type { Storage } from 'unstorage';
import { egressFromEnv } from './egress-from-env';
import { type EmbedderSetup, embedderFromEnv } from './embedder';
import { startNotesSignIn } from './mcp-sign-in';
import { storeFromEnv } from './store';

/** What every request shares: the MCP toolbox and the python sandbox. */
export type Toolbelt = {
  /** MCP tools and their index, kept current while the server runs; `forUser()` per browser. */
  toolbox: McpToolbox;
  /** Carries the servers' elicitation forms to the chat and the answers back. */
  elicitations: McpElicitationBroker;
  /** Stops the bundled notes server. */
  closeNotes: () => Promise<void>;
  /** The Docker + gVisor sandbox (one live interpreter per chat); undefined when python is disabled. */
  sandbox?: DockerSandbox;
  /** Why python is disabled, with what to do about it. */
  pythonProblem?: string;
  /** Redis with REDIS_URL: tool embeddings, MCP sign-ins and (with SANDBOX_STATE_KEY) chats' interpreters. */
  store?: Storage;
  /** Tool retrieval's embedding model (see lib/embedder.ts): a local one runs in a worker thread. */
  embedder: EmbedderSetup;
};

// On globalThis, not in module scope: `next dev` re-evaluates modules on every
// edit, and each evaluation would otherwise spawn another set of MCP servers and
// warm containers. The promise is cached so concurrent first requests share one
// connect, and dropped on failure so a later request can retry.
const cache = globalThis as typeof globalThis & { __aiToolbelt?: Promise<Toolbelt> };

/**
 * The process-wide toolbelt, created on first use and shared by every request
 * (MCP connections own child processes; never open them per request). See
 * {@link closeToolbelt} for shutdown.
 *
 * @example
 * ```ts
 * const { toolbox, sandbox } = await getToolbelt();
 * ```
 */
export function getToolbelt(): Promise<Toolbelt> {
  cache.__aiToolbelt ??= openToolbelt().catch(error => {
    cache.__aiToolbelt = undefined;
    throw error;
  });
  return cache.__aiToolbelt;
}

async function openToolbelt(): Promise<Toolbelt> {
  // The config first: a bad MCP_CONFIG fails here, before any child process or container exists
  // (each later request retries, and must not leave another notes server behind).
  const servers = await loadServers();
  const { store, description: storeDescription } = await storeFromEnv();
  // The bundled notes server needs sign-in, per browser (see lib/mcp-sign-in.ts).
  const notes = await startNotesSignIn({ store }).catch(async error => {
    await store?.dispose();
    throw error;
  });
  const elicitations = new McpElicitationBroker();
  const connect = { onElicitation: elicitations.handler };
  const embedder = await embedderFromEnv();
  // Settled, not Promise.all: when one side fails, the other may already hold a child process
  // or containers, and nothing else would ever close them.
  const [toolbox, python] = await Promise.allSettled([
    openToolbox({ ...servers, ...notes.servers }, embedder, store, storeDescription, connect),
    openSandbox(store),
  ]);
  if (toolbox.status === 'rejected' || python.status === 'rejected') {
    await Promise.allSettled([
      toolbox.status === 'fulfilled' ? toolbox.value.close() : undefined,
      python.status === 'fulfilled' ? python.value.sandbox?.close() : undefined,
      notes.close(),
      store?.dispose(),
      embedder.close(),
    ]);
    throw toolbox.status === 'rejected' ? toolbox.reason : (python as PromiseRejectedResult).reason;
  }
  return {
    toolbox: toolbox.value,
    elicitations,
    closeNotes: notes.close,
    ...python.value,
    ...(store ? { store } : {}),
    embedder,
  };
}

// Hybrid retrieval (lexical + embeddings) when there is an embedding model (lib/embedder.ts),
// lexical otherwise; said once in the log, and in every step row of the page.
async function openToolbox(
  servers: Record<string, McpServerConfig>,
  embedder: EmbedderSetup,
  store: Storage | undefined,
  storeDescription: string,
  connect: Pick<Parameters<typeof connectMcpServers>[0], 'onElicitation'>,
): Promise<McpToolbox> {
  if (embedder.embeddingModel) {
    const index = createToolIndex({
      embeddingModel: embedder.embeddingModel,
      ...(store ? { store } : {}),
      onCacheEvent: event => {
        if (event.type === 'store-error')
          console.warn(`[retrieval] embedding store: ${event.error.message}; embedding again`);
      },
    });
    try {
      const toolbox = await connectMcpServers({ servers, index, ...connect });
      console.log(
        `[retrieval] hybrid, ${embedder.description}, embeddings kept in ${storeDescription}`,
      );
      return toolbox;
    } catch (error) {
      // A server without embeddings, a wrong model id or a local model that cannot load must
      // not take the chat down.
      console.warn(
        `[retrieval] lexical (embedding the tools with ${embedder.description} failed: ${error instanceof Error ? error.message : String(error)})`,
      );
      await embedder.close();
      return connectMcpServers({ servers, ...connect });
    }
  }
  console.log(`[retrieval] lexical (${embedder.description})`);
  return connectMcpServers({ servers, ...connect });
}

/**
 * Ends the MCP child processes, removes the sandbox's containers and ends the local
 * embedding model's worker thread, if the toolbelt was ever opened; `instrumentation.ts`
 * calls it on SIGINT/SIGTERM.
 *
 * @example
 * ```ts
 * process.once('SIGTERM', async () => { await closeToolbelt(); process.exit(0); });
 * ```
 */
export async function closeToolbelt(): Promise<void> {
  const opening = cache.__aiToolbelt;
  cache.__aiToolbelt = undefined;
  const toolbelt = await opening?.catch(() => undefined);
  await Promise.allSettled([
    toolbelt?.toolbox.close(),
    toolbelt?.sandbox?.close(),
    toolbelt?.store?.dispose(),
    toolbelt?.embedder.close(),
  ]);
  await toolbelt?.closeNotes();
}

// MCP_CONFIG or ./mcp.config.json: `{ servers: { name: { command, args } | { url } } }`.
// stdio servers run in the config file's folder; "node" means this Node binary
// (the bundled servers are TypeScript and need Node >= 22).
async function loadServers(): Promise<Record<string, McpServerConfig>> {
  // turbopackIgnore: a run-time path; the build must not trace the whole project for it.
  const file = resolve(/* turbopackIgnore: true */ process.env.MCP_CONFIG ?? 'mcp.config.json');
  const { servers } = JSON.parse(await readFile(file, 'utf8')) as {
    servers: Record<string, McpServerConfig>;
  };
  return Object.fromEntries(
    Object.entries(servers).map(([name, server]) => [
      name,
      'command' in server
        ? {
            ...server,
            command: server.command === 'node' ? process.execPath : server.command,
            cwd: resolve(dirname(file), server.cwd ?? '.'),
          }
        : server,
    ]),
  );
}

// Each chat keeps one live python interpreter. With REDIS_URL and SANDBOX_STATE_KEY its handle
// and history go to Redis (sealed), so every instance continues the chat; otherwise they stay
// in this process.
async function openSandbox(
  store: Storage | undefined,
): Promise<Pick<Toolbelt, 'sandbox' | 'pythonProblem'>> {
  if (process.env.PYTHON_SANDBOX === 'off')
    return { pythonProblem: 'turned off with PYTHON_SANDBOX=off.' };
  const stateKey = process.env.SANDBOX_STATE_KEY;
  if (store !== undefined && stateKey === undefined) {
    console.warn(
      '[python] conversations are kept in this process only: set SANDBOX_STATE_KEY (32+ bytes) to keep them in Redis for every instance',
    );
  }
  try {
    const { DockerSandbox } = await import('ai-toolbelt/sandbox');
    // create() checks the engine, the gVisor runtime and the image up front.
    const egress = egressFromEnv(process.env);
    const sandbox = await DockerSandbox.create({
      warmPoolSize: 1,
      conversations:
        store !== undefined && stateKey !== undefined ? { store, encryptionKey: stateKey } : {},
      // Packages pip installs live under /tmp: give it room when pip can reach an index.
      ...(egress ? { egress, tmpfsMiB: 256 } : {}),
    });
    return { sandbox };
  } catch (error) {
    return { pythonProblem: error instanceof Error ? error.message : String(error) };
  }
}
