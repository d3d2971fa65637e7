import type { NextRequest } from 'next/server';
import { appUrl, refuseCrossSite } from '../../../../lib/same-origin';
import { getToolbelt } from '../../../../lib/toolbelt';
import { knownUserId } from '../../../../lib/user-id';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/**
 * The OAuth redirect of an MCP server's sign-in: finishes it for this
 * browser's user in one call, then tells the chat tab (its opener) and closes.
 * Only for a browser the chat page gave a user id: without one it creates
 * nothing (no user, no toolbox, no sign-in state).
 */
export async function GET(request: NextRequest): Promise<Response> {
  const refused = refuseCrossSite(request);
  if (refused) return refused;
  const params = new URL(request.url).searchParams;
  const code = params.get('code');
  const state = params.get('state');
  if (code === null)
    return page(`Sign-in did not complete (${params.get('error') ?? 'no code'}).`, 400);
  const userId = knownUserId(request);
  if (userId === undefined) {
    return page(
      `Sign-in did not complete: this browser has no session with the chat. Open the chat at ${appUrl()}, then connect again from there.`,
      400,
    );
  }
  try {
    const { toolbox } = await getToolbelt();
    const mine = await toolbox.forUser({ userId });
    const status = await mine.finishAuth({ code, ...(state === null ? {} : { state }) });
    return page(`Connected to ${status.name}. You can close this tab.`, 200, status.name);
  } catch (error) {
    return page(`Sign-in failed: ${(error as Error).message}`, 400);
  }
}

// The callback's page: /mcp-callback.js (public/) tells the chat (its opener) which server is
// connected, then closes the tab.
function page(message: string, status: number, server?: string): Response {
  const escape = (text: string) => text.replace(/[&<>"']/g, char => `&#${char.charCodeAt(0)};`);
  const named = server === undefined ? '' : ` data-server="${escape(server)}"`;
  const notify = server === undefined ? '' : '<script src="/mcp-callback.js"></script>';
  return new Response(
    `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>MCP sign-in</title><p id="result"${named}>${escape(message)}</p>${notify}`,
    { status, headers: { 'content-type': 'text/html; charset=utf-8' } },
  );
}
