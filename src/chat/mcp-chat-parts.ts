import type { UIMessageStreamWriter } from 'ai';
import type {
  McpElicitationBroker,
  McpElicitationPart,
} from '../mcp/elicitation/elicitation-broker.ts';
import type { McpServerStatus } from '../mcp/types.ts';
import type { McpAuthData, ToolbeltUIMessage } from './chat-message.ts';

/** The user's MCP servers and forms, as {@link writeMcpParts} and `chatResponse` take them. */
export type McpChatParts = {
  /** The user's servers (`toolbox.status()` of their toolbox). */
  status: Record<string, McpServerStatus>;
  /** Whose answer: the user whose forms are shown. */
  userId: string;
  /** Where forms come from (the toolbox's `onElicitation`); without it no forms are shown. */
  elicitations?: Pick<McpElicitationBroker, 'subscribe'> | undefined;
};

/**
 * Writes the MCP parts of one answer: a `data-mcp-auth` "Connect" card per server that needs
 * this user to sign in (its tools are not offered until then; servers with app-wide `auth`
 * never get one), and a `data-mcp-elicitation`
 * part per form a server asks for while the answer streams (updated in place once answered).
 * Returns the function that stops listening. Internal to `chatResponse`.
 *
 * @example
 * ```ts
 * const stop = writeMcpParts({ writer, status: mine.status(), userId, elicitations });
 * ```
 */
export function writeMcpParts({
  writer,
  status,
  userId,
  elicitations,
}: McpChatParts & {
  /** This answer's stream. */
  writer: UIMessageStreamWriter<ToolbeltUIMessage>;
}): () => void {
  for (const server of Object.values(status)) {
    if (server.state !== 'needs-auth' || server.authorizationUrl === undefined) continue;
    // Only the user's own sign-in: an app-wide one (no userId) signs every user in with
    // whoever's account finishes it, so its link is for the app's administrator alone.
    if (server.userId === undefined || server.userId !== userId) continue;
    writer.write({
      type: 'data-mcp-auth',
      id: `mcp-auth-${server.name}`,
      data: { server: server.name, url: server.authorizationUrl } satisfies McpAuthData,
    });
  }
  const stop = elicitations?.subscribe(userId, (part: McpElicitationPart) => {
    try {
      writer.write({ type: 'data-mcp-elicitation', id: `mcp-elicitation-${part.id}`, data: part });
    } catch {
      // This answer's stream has ended; the user's other open answers show the form.
    }
  });
  return stop ?? (() => {});
}
