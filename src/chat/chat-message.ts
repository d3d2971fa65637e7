import type { UIMessage } from 'ai';
import type { McpElicitationPart } from '../mcp/elicitation/elicitation-broker.ts';
import type { PythonAttemptEvent, PythonToolOutput } from '../python/python-tool-output.ts';
import type { SelectedTool, ToolSelectionEvent } from '../middleware/selection/tool-selector.ts';

/** The `data-tool-selection` part {@link chatResponse} writes: what one model call was offered. */
export type ToolSelectionData = {
  /** Model call number within the answer, from 1. */
  step: number;
  /** The retrieval query (the latest user message), cut to 200 characters. */
  query: string;
  /** Kept tools in the order they were sent, with why each was kept. */
  selected: SelectedTool[];
  /** How many tools were left out. */
  dropped: number;
  /** Selection time. */
  ms: number;
  /** `hybrid` (lexical + embeddings), `dense`, or `lexical` (no embedding model). */
  retrieval: ToolSelectionEvent['retrieval'];
};

/** The `data-mcp-auth` part: a server waiting for the user to connect it (sign in at `url`). */
export type McpAuthData = { server: string; url: string };

/**
 * The UI message of a chat answered by {@link chatResponse}, for `useChat<ToolbeltUIMessage>()`:
 * its data parts (`data-tool-selection`, `data-repair` with `repairParts`, `data-mcp-auth`,
 * `data-mcp-elicitation`) and the typed `python` tool, whose preliminary outputs are the
 * attempts. MCP tools arrive as `dynamic-tool` parts.
 *
 * @example
 * ```ts
 * const { messages } = useChat<ToolbeltUIMessage>();
 * const selections = messages.at(-1)?.parts.filter(part => part.type === 'data-tool-selection');
 * ```
 */
export type ToolbeltUIMessage = UIMessage<
  never,
  {
    'tool-selection': ToolSelectionData;
    repair: PythonAttemptEvent;
    'mcp-auth': McpAuthData;
    'mcp-elicitation': McpElicitationPart;
  },
  { python: { input: { code: string }; output: PythonToolOutput } }
>;
