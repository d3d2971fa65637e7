import type { McpElicitationResult } from 'ai-toolbelt/mcp';
import { getToolbelt } from '../../../../../lib/toolbelt';
import { currentUserId } from '../../../../../lib/user-id';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** The user's answer to a server's form: `{ action, content? }`. */
export async function POST(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const body = (await request.json().catch(() => undefined)) as McpElicitationResult | undefined;
  if (body === undefined || !['accept', 'decline', 'cancel'].includes(body.action))
    return Response.json(
      { error: 'Expected { action: "accept" | "decline" | "cancel", content? }' },
      { status: 400 },
    );
  const { elicitations } = await getToolbelt();
  const answered = elicitations.answer({
    id: (await params).id,
    userId: await currentUserId(),
    result: body,
  });
  return answered
    ? Response.json({ ok: true })
    : Response.json({ error: 'No such question waits for you.' }, { status: 404 });
}
