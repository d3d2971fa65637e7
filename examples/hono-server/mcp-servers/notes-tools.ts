// The notes server's tools, registered per session for the signed-in user.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

type Note = { title: string; text: string; color: string };
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

/**
 * Registers `whoami`, `list_notes`, `search_notes` and `add_note` (which asks
 * the user for a title and colour through elicitation) on one session's server.
 *
 * @example
 * ```ts
 * registerNoteTools({ server, user: 'ada', notes: [] });
 * ```
 */
export function registerNoteTools({
  server,
  user,
  notes,
}: {
  /** The session's MCP server. */
  server: McpServer;
  /** The signed-in user. */
  user: string;
  /** That user's notes (shared by their sessions). */
  notes: Note[];
}): void {
  server.registerTool(
    'whoami',
    { description: 'Which user is signed in to the notes service' },
    () => text(`Signed in to notes as ${user}.`),
  );
  server.registerTool(
    'list_notes',
    { description: "List the signed-in user's notes: title, colour and text" },
    () =>
      text(
        notes.length === 0
          ? `${user} has no notes yet.`
          : notes.map(note => `- ${note.title} (${note.color}): ${note.text}`).join('\n'),
      ),
  );
  server.registerTool(
    'search_notes',
    {
      description: "Search the signed-in user's notes for a word",
      inputSchema: { query: z.string().describe('Word to look for') },
    },
    ({ query }) => {
      const hits = notes.filter(note =>
        `${note.title} ${note.text}`.toLowerCase().includes(query.toLowerCase()),
      );
      return text(
        hits.length === 0
          ? 'No matching notes.'
          : hits.map(n => `- ${n.title}: ${n.text}`).join('\n'),
      );
    },
  );
  server.registerTool(
    'add_note',
    {
      description: 'Save a new note for the signed-in user (asks them for a title and colour)',
      inputSchema: { text: z.string().describe('The note') },
    },
    async ({ text: body }, extra) => {
      const suggested = body.split(/\s+/).slice(0, 4).join(' ');
      let title = suggested;
      let color = 'yellow';
      if (server.server.getClientCapabilities()?.elicitation) {
        const answer = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: {
              message: `Save "${body}" to your notes?`,
              requestedSchema: {
                type: 'object',
                properties: {
                  title: { type: 'string', title: 'Title', default: suggested },
                  color: {
                    type: 'string',
                    title: 'Colour',
                    enum: ['yellow', 'blue', 'green', 'pink'],
                    default: 'yellow',
                  },
                },
                required: ['title'],
              },
            },
          },
          ElicitResultSchema,
        );
        if (answer.action !== 'accept')
          return text(`Not saved: the user chose to ${answer.action}.`);
        title = String(answer.content?.title ?? suggested);
        color = String(answer.content?.color ?? 'yellow');
      }
      notes.push({ title, text: body, color });
      return text(`Saved note "${title}" (${color}) for ${user}.`);
    },
  );
}
