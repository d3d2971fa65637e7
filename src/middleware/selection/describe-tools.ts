import { type ToolSet, asSchema } from 'ai';
import type { OfferedTool } from './offered-tools.ts';

// Per tool set: the SDK's schemas are converted once, not on every step.
const described = new WeakMap<ToolSet, Promise<OfferedTool[]>>();

/**
 * The tools of an AI SDK `ToolSet` as the selector needs them (name, fixed
 * description, JSON Schema), converted once per tool set.
 *
 * @example
 * ```ts
 * const offered = await describeTools(tools);
 * ```
 */
export function describeTools(tools: ToolSet): Promise<OfferedTool[]> {
  let offered = described.get(tools);
  if (offered === undefined) described.set(tools, (offered = describeAll(tools)));
  return offered;
}

async function describeAll(tools: ToolSet): Promise<OfferedTool[]> {
  return Promise.all(
    Object.entries(tools).map(async ([name, tool]) => ({
      name,
      // A description may be a function of the call's context; retrieval needs a fixed text.
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      inputSchema: await asSchema(tool.inputSchema).jsonSchema,
    })),
  );
}
