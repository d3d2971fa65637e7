import type { UIMessageStreamWriter } from 'ai';
import type { McpElicitationBroker, McpServerStatus } from 'ai-toolbelt/mcp';
import type { ChatMessage } from './chat-message';

/**
 * Writes the MCP parts of one answer: a "Connect" card per server that needs
 * the user to sign in (its tools are not offered until then), and each
 * elicitation form a server asks for during this answer (updated in place
 * once answered). Returns the function that stops listening.
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
}: {
  /** This answer's stream. */
  writer: UIMessageStreamWriter<ChatMessage>;
  /** The user's servers. */
  status: Record<string, McpServerStatus>;
  /** Whose answer. */
  userId: string;
  /** Where forms come from. */
  elicitations: McpElicitationBroker;
}): () => void {
  for (const server of Object.values(status)) {
    if (server.state !== 'needs-auth' || server.authorizationUrl === undefined) continue;
    writer.write({
      type: 'data-mcp-auth',
      id: `mcp-auth-${server.name}`,
      data: { server: server.name, url: server.authorizationUrl },
    });
  }
  return elicitations.subscribe(userId, part => {
    try {
      writer.write({ type: 'data-mcp-elicitation', id: `mcp-elicitation-${part.id}`, data: part });
    } catch {
      // This answer's stream has ended; the user's other open answers show the form.
    }
  });
}
