import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import type { ToolDescriptor } from './types.ts';

/** The searchable text of one tool, split by field so each can be weighted. */
export type ToolFields = {
  name: string;
  server: string;
  description: string;
  parameterNames: string;
  parameterDescriptions: string;
  /**
   * Words of the requests the tool served, when the index learns from use
   * (empty in the tool's own text; the index fills it from what it learned).
   */
  usage: string;
};

export const FIELD_NAMES = [
  'name',
  'server',
  'description',
  'parameterNames',
  'parameterDescriptions',
  'usage',
] as const satisfies readonly (keyof ToolFields)[];

export type FieldName = (typeof FIELD_NAMES)[number];

// Schemas from the wild nest deeply and can be huge; what matters for
// retrieval is near the top.
const MAX_SCHEMA_DEPTH = 4;
const MAX_PROPERTIES = 200;

/**
 * Checks one descriptor and returns a normalised copy; the error names the
 * offending entry (`tools[3].description`).
 */
export function validateToolDescriptor(tool: unknown, path: string): ToolDescriptor {
  if (tool == null || typeof tool !== 'object' || Array.isArray(tool)) {
    throw new InvalidArgumentError({ argument: path, value: tool, message: 'expected an object' });
  }
  const { name, description, inputSchema, server } = tool as Record<string, unknown>;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new InvalidArgumentError({
      argument: `${path}.name`,
      value: name,
      message: 'expected a non-empty string',
    });
  }
  if (description != null && typeof description !== 'string') {
    throw new InvalidArgumentError({
      argument: `${path}.description`,
      value: description,
      message: `expected a string, got ${typeof description}`,
    });
  }
  if (server != null && typeof server !== 'string') {
    throw new InvalidArgumentError({
      argument: `${path}.server`,
      value: server,
      message: `expected a string, got ${typeof server}`,
    });
  }
  if (inputSchema != null && typeof inputSchema !== 'object' && typeof inputSchema !== 'boolean') {
    throw new InvalidArgumentError({
      argument: `${path}.inputSchema`,
      value: inputSchema,
      message: 'expected a JSON Schema object',
    });
  }
  return {
    name,
    ...(description != null ? { description } : {}),
    ...(inputSchema != null ? { inputSchema } : {}),
    ...(server != null ? { server } : {}),
  };
}

/**
 * Extracts the searchable fields of a tool. Parameter names and descriptions
 * come from `properties` at any depth (nested objects, array items,
 * anyOf/oneOf branches), plus string enum values, which often name the
 * domain ("celsius", "fahrenheit").
 */
export function toolFields(tool: ToolDescriptor): ToolFields {
  const names: string[] = [];
  const descriptions: string[] = [];
  collectSchemaText(tool.inputSchema, 0, names, descriptions);
  return {
    name: tool.name,
    server: tool.server ?? '',
    description: tool.description ?? '',
    parameterNames: names.join(' '),
    parameterDescriptions: descriptions.join(' '),
    usage: '',
  };
}

function collectSchemaText(
  schema: unknown,
  depth: number,
  names: string[],
  descriptions: string[],
): void {
  if (schema == null || typeof schema !== 'object' || depth > MAX_SCHEMA_DEPTH) return;
  if (names.length >= MAX_PROPERTIES) return;
  const node = schema as Record<string, unknown>;
  if (depth > 0 && typeof node.description === 'string') descriptions.push(node.description);
  if (Array.isArray(node.enum)) {
    for (const value of node.enum) if (typeof value === 'string') descriptions.push(value);
  }
  const properties = node.properties;
  if (properties != null && typeof properties === 'object' && !Array.isArray(properties)) {
    for (const [key, child] of Object.entries(properties)) {
      names.push(key);
      collectSchemaText(child, depth + 1, names, descriptions);
    }
  }
  if (node.items != null) collectSchemaText(node.items, depth + 1, names, descriptions);
  for (const branch of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = node[branch];
    if (Array.isArray(list))
      for (const item of list) collectSchemaText(item, depth, names, descriptions);
  }
}
