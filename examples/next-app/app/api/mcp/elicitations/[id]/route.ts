import type { NextRequest } from 'next/server';
import type { McpElicitationResult } from 'ai-toolbelt/mcp';
import { readJsonBody } from '../../../../../lib/read-json-body';
import { refuseCrossSite } from '../../../../../lib/same-origin';
import { getToolbelt } from '../../../../../lib/toolbelt';
import { knownUserId } from '../../../../../lib/user-id';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** A form's answer is a few fields; anything near this size is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** The user's answer to a server's form: `{ action, content? }`, at most 64 KiB. */
export async function POST(
  request: NextRequest,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const refused = refuseCrossSite(request, { json: true });
  if (refused) return refused;
  const read = await readJsonBody(request, MAX_ANSWER_BYTES);
  if ('response' in read) return read.response;
  const body = read.value as McpElicitationResult | undefined;
  if (body === undefined || !['accept', 'decline', 'cancel'].includes(body?.action))
    return Response.json(
      { error: 'Expected { action: "accept" | "decline" | "cancel", content? }' },
      { status: 400 },
    );
  // No id, no form of yours: a browser that never loaded the page has nothing to answer.
  const userId = knownUserId(request);
  const { elicitations } = await getToolbelt();
  const answered =
    userId !== undefined && elicitations.answer({ id: (await params).id, userId, result: body });
  return answered
    ? Response.json({ ok: true })
    : Response.json({ error: 'No such question waits for you.' }, { status: 404 });
}
