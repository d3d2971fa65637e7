import type { McpElicitationBroker, McpElicitationResult, McpServerStatus } from 'ai-toolbelt/mcp';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { requireJson } from './same-origin.ts';
import { knownUserId } from './user-id.ts';

/** A form's answer is a few fields; anything near this size is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** The part of a toolbox the sign-in routes use (`connectMcpServers()` returns one). */
export type SignInToolbox = {
  forUser(options: { userId: string; abortSignal?: AbortSignal }): Promise<{
    readonly tools: import('ai').ToolSet;
    status(): Record<string, McpServerStatus>;
    finishAuth(options: { code: string; state?: string }): Promise<McpServerStatus>;
  }>;
};

/**
 * The sign-in and elicitation routes: `GET /api/mcp/callback` (the OAuth
 * redirect: finishes the user's sign-in in one call and tells the chat page)
 * and `POST /api/mcp/elicitations/:id` (the answer to a form, JSON of at
 * most 64 KiB: 413 beyond, before it is parsed). Both act only
 * for a browser the chat page gave a user id: without one they create
 * nothing (no user, no toolbox, no sign-in state).
 *
 * @example
 * ```ts
 * app.route('/', mcpRoutes({ toolbox, elicitations, userIdKey: PROCESS_USER_ID_KEY }));
 * ```
 */
export function mcpRoutes({
  toolbox,
  elicitations,
  userIdKey,
}: {
  /** The process-wide toolbox. */
  toolbox: SignInToolbox;
  /** Where forms wait for answers. */
  elicitations?: McpElicitationBroker | undefined;
  /** What the page signed the user id cookie with (see `createApp`). */
  userIdKey: string;
}): Hono {
  const app = new Hono();

  app.get('/api/mcp/callback', async c => {
    const code = c.req.query('code');
    const state = c.req.query('state');
    const denied = c.req.query('error');
    if (denied !== undefined || code === undefined)
      return c.html(page(`Sign-in did not complete (${denied ?? 'no code'}).`, undefined), 400);
    const userId = await knownUserId(c, userIdKey);
    if (userId === undefined) return c.html(page(NO_SESSION, undefined), 400);
    try {
      const mine = await toolbox.forUser({ userId });
      const status = await mine.finishAuth({ code, ...(state === undefined ? {} : { state }) });
      return c.html(page(`Connected to ${status.name}. You can close this tab.`, status.name));
    } catch (error) {
      return c.html(page(`Sign-in failed: ${(error as Error).message}`, undefined), 400);
    }
  });

  // The limit reads a chunked body only up to the cap; a Content-Length above it is refused unread.
  const limit = bodyLimit({
    maxSize: MAX_ANSWER_BYTES,
    onError: c => c.json({ error: `The body is larger than ${MAX_ANSWER_BYTES} bytes.` }, 413),
  });
  app.post('/api/mcp/elicitations/:id', requireJson(), limit, async c => {
    const body = await c.req.json<McpElicitationResult>().catch(() => undefined);
    if (body === undefined || !['accept', 'decline', 'cancel'].includes(body?.action))
      return c.json(
        { error: 'Expected { action: "accept" | "decline" | "cancel", content? }' },
        400,
      );
    const userId = await knownUserId(c, userIdKey);
    const answered =
      userId !== undefined && elicitations?.answer({ id: c.req.param('id'), userId, result: body });
    return answered
      ? c.json({ ok: true })
      : c.json({ error: 'No such question waits for you.' }, 404);
  });

  return app;
}

const NO_SESSION =
  'Sign-in did not complete: this browser has no session with the chat. Open the chat page at the address the app was configured with (PUBLIC_URL), then connect again from there.';

// The callback's page: /assets/mcp-callback.js tells the chat (its opener) which server is
// connected, then closes the tab.
function page(message: string, server: string | undefined): string {
  const escape = (text: string) => text.replace(/[&<>"']/g, char => `&#${char.charCodeAt(0)};`);
  const named = server === undefined ? '' : ` data-server="${escape(server)}"`;
  const notify = server === undefined ? '' : '<script src="/assets/mcp-callback.js"></script>';
  return `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>MCP sign-in</title><p id="result"${named}>${escape(message)}</p>${notify}`;
}
