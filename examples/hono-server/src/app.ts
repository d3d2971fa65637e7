import { readFile } from 'node:fs/promises';
import type { ToolSet } from 'ai';
import { type PythonSandbox, type ToolIndex, chatResponse, readChatRequest } from 'ai-toolbelt';
import type { McpElicitationBroker, McpServerStatus } from 'ai-toolbelt/mcp';
import { Hono } from 'hono';
import { type SignInToolbox, mcpRoutes } from './mcp-routes.ts';
import { type ChatModel, MISSING_MODEL_MESSAGE } from './model-from-env.ts';
import { type AppOrigins, requireJson, sameOrigin } from './same-origin.ts';
import { securityHeaders } from './security-headers.ts';
import { PROCESS_USER_ID_KEY, issueUserId, knownUserId } from './user-id.ts';

/** Options of {@link createApp}. */
export type ChatAppOptions = {
  /**
   * Where the app is reached (`appOrigins({ publicUrl, port })`): requests
   * for another host get 421 and requests from another origin 403.
   */
  origins: AppOrigins;
  /**
   * MCP tools, their index and server status: a toolbox from
   * `connectMcpServers`. With `forUser`, each browser chats with its own
   * per-user toolbox (servers that need sign-in) and the sign-in routes exist.
   */
  toolbox: {
    readonly tools: ToolSet;
    readonly index: ToolIndex;
    status(): Record<string, McpServerStatus>;
    forUser?: SignInToolbox['forUser'];
  };
  /** Carries MCP elicitation forms to the chat and answers back (the toolbox's `onElicitation`). */
  elicitations?: McpElicitationBroker;
  /** The chat model; without it chat requests get a 503 saying what to set. */
  model?: ChatModel;
  /** Which model, for /healthz. */
  modelDescription?: string;
  /** Runs the python tool; without it the tool is left out. */
  sandbox?: PythonSandbox;
  /** Why python is disabled, shown on the page and in /healthz. */
  pythonProblem?: string;
  /** Tools retrieval picks per model call. */
  topK?: number;
  /** Model calls per answer. */
  maxSteps?: number;
  /**
   * Signs the user id cookie (`USER_ID_KEY`); random per process by default.
   * Instances behind one address need the same key.
   */
  userIdKey?: string;
  /**
   * The app runs behind a proxy that sets `X-Forwarded-Proto` (`TRUST_PROXY=1`): a page the
   * proxy served over https gets a `Secure` user id cookie. Without it only the request's own
   * scheme counts (any client can send the header).
   */
  trustProxy?: boolean;
};

const SYSTEM =
  'You are a helpful assistant. Use the tools you are given. For any calculation, ' +
  'write a short Python program and run it with the python tool, printing the result. ' +
  'When a chart helps, draw it with matplotlib in the same program: the user sees it.';

/** Characters of `q` for /api/tools/search. */
const MAX_SEARCH_CHARS = 500;

const PUBLIC = new URL('../public/', import.meta.url);
const JS = 'text/javascript; charset=utf-8';
const ASSETS: Record<string, string> = {
  'chat.js': JS,
  'ui-stream.js': JS,
  'mcp-parts.js': JS,
  'dom.js': JS,
  'python-parts.js': JS,
  'python-results.js': JS,
  'safe-html.js': JS,
  'chart-svg.js': JS,
  'chart-layout.js': JS,
  'mcp-callback.js': JS,
  'purify.es.mjs': JS,
  'mcp.css': 'text/css; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};
// The page has no bundler: DOMPurify's ES module is served as published, from node_modules.
const FROM_PACKAGES: Record<string, URL> = {
  'purify.es.mjs': new URL(import.meta.resolve('dompurify')),
};

/**
 * The example's HTTP app: `GET /` (chat page), `POST /api/chat` (UI message
 * stream), `GET /api/tools/search?q=` (what retrieval picks), `GET /healthz`.
 * Every route answers only its own origin and hosts (`origins`), and bodies
 * must be JSON. It owns nothing: `main.ts` creates the toolbox and sandbox
 * once per process and closes them on shutdown, and tests hand in their own.
 *
 * @example
 * ```ts
 * const app = createApp({ origins: appOrigins({ port: 3000 }), toolbox, model, sandbox });
 * serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 3000 });
 * ```
 */
export function createApp({
  origins,
  toolbox,
  model,
  modelDescription = model ? 'configured' : 'none',
  sandbox,
  pythonProblem,
  topK = 3,
  maxSteps = 8,
  elicitations,
  userIdKey = PROCESS_USER_ID_KEY,
  trustProxy = false,
}: ChatAppOptions): Hono {
  const app = new Hono();
  // On every response, refusals included: CSP, nosniff, no framing (see security-headers.ts).
  app.use('*', securityHeaders());
  // Then, for every route: DNS rebinding (a foreign Host) and other sites' pages (a foreign Origin).
  app.use('*', sameOrigin(origins));
  const forUser = toolbox.forUser?.bind(toolbox);
  if (forUser !== undefined)
    app.route('/', mcpRoutes({ toolbox: { forUser }, elicitations, userIdKey }));

  app.get('/', async c => {
    // Only the page hands out a user id (per-user MCP sign-in); other routes just read it.
    if (forUser) await issueUserId(c, { key: userIdKey, trustProxy });
    return c.html(await readFile(new URL('index.html', PUBLIC), 'utf8'));
  });
  app.get('/assets/:file', async c => {
    const file = c.req.param('file');
    const type = ASSETS[file];
    if (type === undefined) return c.notFound();
    const url = FROM_PACKAGES[file] ?? new URL(file, PUBLIC);
    return c.body(await readFile(url, 'utf8'), 200, { 'content-type': type });
  });

  app.get('/healthz', c =>
    c.json({
      ok: true,
      model: model
        ? { configured: true, description: modelDescription }
        : { configured: false, description: modelDescription, problem: MISSING_MODEL_MESSAGE },
      python: sandbox ? { enabled: true } : { enabled: false, problem: pythonProblem },
      mcp: Object.values(toolbox.status()).map(({ name, state, tools, error }) => ({
        name,
        state,
        tools,
        ...(error ? { error: error.message } : {}),
      })),
      topK,
    }),
  );

  app.get('/api/tools/search', async c => {
    const query = c.req.query('q')?.trim() ?? '';
    if (query === '')
      return c.json({ error: 'Add a query: /api/tools/search?q=weather+in+Oslo' }, 400);
    if (query.length > MAX_SEARCH_CHARS) {
      return c.json(
        { error: `The query is ${query.length} characters; at most ${MAX_SEARCH_CHARS}.` },
        400,
      );
    }
    const k = Number(c.req.query('k') ?? topK);
    if (!Number.isInteger(k) || k < 1 || k > 100)
      return c.json({ error: 'k must be a whole number from 1 to 100' }, 400);
    const hits = await toolbox.index.search(query, { topK: k, mode: 'multi' });
    return c.json({
      query,
      topK: k,
      results: hits.map(({ name, score, server }) => ({
        name,
        score,
        server,
        description: toolbox.tools[name]?.description,
      })),
    });
  });

  app.post('/api/chat', requireJson(), async c => {
    if (!model) return c.json({ error: MISSING_MODEL_MESSAGE }, 503);
    // Bounded while the body streams in (and from Content-Length first): a 20 MB message is
    // refused before it is read, not parsed and then refused.
    const chat = await readChatRequest({ request: c.req.raw });
    if ('response' in chat) return chat.response;
    // A browser the page gave an id chats with its own toolbox (shared servers plus the ones
    // it signed in to); any other client gets the shared servers and creates no per-user state.
    const userId = forUser ? await knownUserId(c, userIdKey) : undefined;
    const mine =
      forUser && userId !== undefined
        ? await forUser({ userId, abortSignal: c.req.raw.signal })
        : toolbox;
    return chatResponse({
      messages: chat.messages,
      model,
      system: SYSTEM,
      tools: mine.tools,
      index: toolbox.index,
      sandbox,
      // The page shows each python attempt from its data-repair part.
      repairParts: true,
      ...(userId === undefined ? {} : { mcp: { status: mine.status(), userId, elicitations } }),
      // The chat's interpreter: its id from the page, bound to this browser's user id. Clients
      // without either run python one-shot.
      ...(userId !== undefined && chat.chatId !== undefined && sandbox?.executeCell
        ? { conversation: { id: chat.chatId, userId } }
        : {}),
      topK,
      maxSteps,
      abortSignal: c.req.raw.signal,
      // A local example: show the real error (a 401 from the model server, say), not a generic one.
      onError: error => (error instanceof Error ? error.message : String(error)),
    });
  });

  return app;
}
