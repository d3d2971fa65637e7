// Starts the example: one MCP toolbox and one sandbox for the whole process
// (never per request: they own child processes and containers), then the HTTP
// server on 127.0.0.1. Configuration comes from the environment; see README.md.
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { createApp } from './app.ts';
import { McpElicitationBroker } from 'ai-toolbelt/mcp';
import { egressFromEnv } from './egress-from-env.ts';
import { embedderFromEnv } from './embedder-from-env.ts';
import { loadMcpConfig } from './load-mcp-config.ts';
import { startNotesSignIn } from './mcp-sign-in.ts';
import { modelFromEnv } from './model-from-env.ts';
import { openPythonSandbox } from './open-python-sandbox.ts';
import { openToolbox } from './open-toolbox.ts';
import { appOrigins } from './same-origin.ts';
import { storeFromEnv } from './store-from-env.ts';
import { startTelemetry } from './telemetry.ts';

const env = process.env;
// A shared store holds every browser's MCP sign-in tokens, and createMcpOAuth refuses to keep them
// there unencrypted: say so in one line rather than with its stack trace.
if (env.REDIS_URL && !env.MCP_TOKEN_KEY && env.NOTES_MCP !== 'off') {
  console.error(
    'REDIS_URL is set but MCP_TOKEN_KEY is not: set MCP_TOKEN_KEY (32+ characters, e.g. `openssl rand -base64 32`) to encrypt the MCP sign-in tokens kept in Redis, or NOTES_MCP=off.',
  );
  process.exit(1);
}
// First, so the MCP connections and the sandbox's start are traced too.
const telemetry = await startTelemetry({ env, serviceName: 'ai-toolbelt-hono-example' });
const port = Number(env.PORT ?? 3000);
const configPath = env.MCP_CONFIG ?? new URL('../mcp.config.json', import.meta.url).pathname;

const setup = modelFromEnv(env);
// The local model when installed, else the provider's with a key, else none (lexical); see
// embedder-from-env.ts. A local model runs in a worker thread, closed on shutdown below.
const embedder = embedderFromEnv(env);
const storage = await storeFromEnv(env);
// The bundled notes server needs sign-in (per browser); NOTES_MCP=off leaves it out.
const notes = await startNotesSignIn({
  disabled: env.NOTES_MCP === 'off',
  encryptionKey: env.MCP_TOKEN_KEY,
  ...(storage.store ? { store: storage.store } : {}),
});
const elicitations = new McpElicitationBroker();
const [toolbox, python] = await Promise.all([
  openToolbox({
    servers: { ...(await loadMcpConfig(configPath)), ...notes.servers },
    onElicitation: elicitations.handler,
    ...(embedder.embeddingModel ? { embeddingModel: embedder.embeddingModel } : {}),
    ...(storage.store ? { store: storage.store } : {}),
    onEvent: event => {
      if (event.type === 'connect-failed' || event.type === 'gave-up' || event.type === 'error')
        console.warn(
          `[mcp] ${event.type}${'server' in event ? ` ${event.server}` : ''}: ${event.error.message}`,
        );
    },
  }),
  openPythonSandbox({
    disabled: env.PYTHON_SANDBOX === 'off',
    store: storage.store,
    stateKey: env.SANDBOX_STATE_KEY,
    egress: egressFromEnv(env),
  }),
]);

// The app is made once the port is known (PORT=0 picks one): its origins include it.
const app = (port: number) =>
  createApp({
    origins: appOrigins({ publicUrl: env.PUBLIC_URL, port }),
    toolbox,
    ...(setup.model ? { model: setup.model } : {}),
    modelDescription: setup.description,
    ...(python.sandbox ? { sandbox: python.sandbox } : {}),
    ...(python.problem ? { pythonProblem: python.problem } : {}),
    topK: Number(env.TOOLS_TOP_K ?? 3),
    elicitations,
    ...(env.USER_ID_KEY ? { userIdKey: env.USER_ID_KEY } : {}),
    // Behind a proxy that terminates TLS: its X-Forwarded-Proto makes the user id cookie Secure.
    trustProxy: env.TRUST_PROXY === '1',
  });

for (const server of Object.values(toolbox.status())) {
  console.log(
    `[mcp] ${server.name}: ${server.state}, ${server.tools} tools${server.error ? ` (${server.error.message})` : ''}`,
  );
}
console.log(`[model] ${setup.description}`);
if (storage.store && !env.USER_ID_KEY)
  console.warn(
    '[users] the user id cookie is signed with a key of this process only: set USER_ID_KEY (32+ characters) so every instance sharing REDIS_URL accepts it',
  );
if (telemetry) console.log(`[telemetry] ${telemetry.description}`);
if (setup.problem) console.warn(`[model] ${setup.problem}`);
// Said once here, and on every selection (the page's step rows show it).
if (toolbox.index.retrieval === 'lexical' && embedder.embeddingModel) {
  console.log(`[retrieval] lexical (${embedder.description} failed, see above)`);
  await embedder.close();
} else {
  console.log(
    toolbox.index.retrieval === 'lexical'
      ? `[retrieval] lexical (${embedder.description})`
      : `[retrieval] hybrid, ${embedder.description}, embeddings kept in ${storage.description}`,
  );
}
console.log(
  python.sandbox
    ? `[python] sandbox ready (${python.sandbox.engineStatus()[0]?.name.startsWith('kubernetes') ? 'Kubernetes pods' : 'Docker'} + gVisor)`
    : `[python] disabled: ${python.problem}`,
);

let listening: Hono | undefined;
const server = serve(
  {
    // Connections are accepted only after the callback below has run.
    fetch: (request, bindings) =>
      listening ? listening.fetch(request, bindings) : new Response(null, { status: 503 }),
    hostname: '127.0.0.1',
    port,
  },
  info => {
    listening = app(info.port);
    // The OAuth callback's origin is configuration (PUBLIC_URL), never a request's Host.
    notes.setAppUrl(env.PUBLIC_URL ?? `http://127.0.0.1:${info.port}`);
    console.log(`Listening on http://127.0.0.1:${info.port}`);
  },
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    if (stopping) return;
    stopping = true;
    server.close();
    // Closing ends the MCP child processes, removes the sandbox containers and ends the local
    // embedding model's worker thread.
    await Promise.allSettled([
      toolbox.close(),
      python.sandbox?.close(),
      storage.store?.dispose(),
      embedder.close(),
    ]);
    await notes.close();
    // Sends the spans and metrics still buffered.
    await telemetry?.shutdown();
    process.exit(0);
  });
}
