import type { UIMessage } from 'ai';
import type { PythonToolOutput } from 'ai-toolbelt';
import type { McpElicitationPart } from 'ai-toolbelt/mcp';

/** The `data-tool-selection` part: the tools one model call was offered. */
export type ToolSelectionData = {
  /** Model call number within the answer, from 1. */
  step: number;
  /** Kept tools in catalog order, with why each was kept. */
  selected: Array<{ name: string; score?: number; reason: string }>;
  /** How many tools were left out. */
  dropped: number;
  /** Selection time. */
  ms: number;
  /** `hybrid` (lexical + embeddings) or `lexical` (no embedding model). */
  retrieval: string;
};

/** The `data-mcp-auth` part: a server waiting for the user to connect it. */
export type McpAuthData = { server: string; url: string };

/** The `data-mcp-elicitation` part: a server's question during a tool call, as a form. */
export type McpElicitationData = McpElicitationPart;

/**
 * The chat's UI message type, shared by the route and the page: a
 * `data-tool-selection` part per model call and the typed `python` tool (its
 * preliminary outputs are the attempt states). MCP tools arrive as
 * `dynamic-tool` parts.
 */
export type ChatMessage = UIMessage<
  never,
  {
    'tool-selection': ToolSelectionData;
    'mcp-auth': McpAuthData;
    'mcp-elicitation': McpElicitationData;
  },
  { python: { input: { code: string }; output: PythonToolOutput } }
>;
