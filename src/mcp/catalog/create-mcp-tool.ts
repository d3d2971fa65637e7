import { dynamicTool, jsonSchema, type JSONSchema7, type Tool } from 'ai';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { McpToolError } from '../../errors/mcp-tool-error.ts';
import { boundJson } from '../../util/untrusted/bound-json.ts';
import { safeLabel } from '../../util/untrusted/safe-label.ts';
import { contentText, toModelOutput, type McpCallResult } from '../calls/to-model-output.ts';

/** Runs `tools/call` on the tool's server (timeouts and reconnects are its business). */
export type McpCall = (
  tool: string,
  args: Record<string, unknown>,
  abortSignal: AbortSignal | undefined,
  toolCallId?: string,
) => Promise<McpCallResult>;

/**
 * Wraps one MCP tool as an AI SDK dynamic tool: its JSON Schema as input,
 * `execute` calling the server, `isError` results thrown as
 * {@link McpToolError} (so the model gets a tool error), and content mapped
 * to model output by {@link toModelOutput}. The result is bounded in depth first (`boundJson`:
 * a server's deeply nested result must not break the chat's stream or the next model request).
 * `metadata` names the source, so tool-call parts and UI parts can show where a tool came from
 * (the tool's name without control or invisible formatting characters: `safeLabel`).
 *
 * @example
 * ```ts
 * const search = createMcpTool({ server: 'docs', tool, call: (name, args, signal) => connection.callTool(name, args, signal) });
 * ```
 */
export function createMcpTool({
  server,
  tool,
  call,
}: {
  /** The server's name. */
  server: string;
  /** The tool as `tools/list` described it. */
  tool: McpTool;
  /** Sends the call. */
  call: McpCall;
}): Tool {
  return dynamicTool({
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? '',
    inputSchema: jsonSchema(inputSchemaOf(tool)),
    metadata: { mcpServer: server, mcpTool: safeLabel(tool.name) },
    execute: async (input, { abortSignal, toolCallId }) => {
      const args = (input ?? {}) as Record<string, unknown>;
      const result = await call(tool.name, args, abortSignal, toolCallId);
      if (result.isError === true) {
        throw new McpToolError({
          server,
          tool: tool.name,
          content: result.content ?? [],
          message: contentText(result.content) || `Tool "${tool.name}" failed without saying why.`,
        });
      }
      // Both go to the UI stream and to the model as they are: JSON.stringify must get through.
      return boundJson({
        content: result.content ?? [],
        ...(result.structuredContent === undefined
          ? {}
          : { structuredContent: result.structuredContent }),
      }).value;
    },
    toModelOutput: ({ output }) => toModelOutput(output as McpCallResult),
  });
}

// Providers reject an object schema without `properties` (OpenAI) or a missing
// `type`; MCP servers send both.
function inputSchemaOf(tool: McpTool): JSONSchema7 {
  const schema = { ...(tool.inputSchema as JSONSchema7 | undefined) };
  schema.type ??= 'object';
  if (schema.type === 'object') schema.properties ??= {};
  return schema;
}
