import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { validateToolDescriptor } from './tool-fields.ts';
import { toolHash } from './tool-text.ts';
import type { ToolDescriptor } from './types.ts';

/**
 * Checks a batch of tools for an upsert and splits it into changed tools
 * (with their content hash) and a count of unchanged ones. Errors name the
 * offending entry (`tools[3].description`); names must be unique in a batch.
 *
 * @example
 * ```ts
 * const { changed, unchanged } = diffCatalog(tools, name => indexed.get(name)?.hash);
 * ```
 */
export function diffCatalog(
  tools: readonly ToolDescriptor[],
  indexedHash: (name: string) => string | undefined,
): { changed: { tool: ToolDescriptor; hash: string }[]; unchanged: number } {
  if (!Array.isArray(tools)) {
    throw new InvalidArgumentError({
      argument: 'tools',
      value: tools,
      message: 'expected an array',
    });
  }
  const seen = new Map<string, number>();
  const changed: { tool: ToolDescriptor; hash: string }[] = [];
  let unchanged = 0;
  tools.forEach((raw, i) => {
    const tool = validateToolDescriptor(raw, `tools[${i}]`);
    const first = seen.get(tool.name);
    if (first !== undefined) {
      throw new InvalidArgumentError({
        argument: `tools[${i}].name`,
        value: tool.name,
        message: `duplicates tools[${first}].name; tool names must be unique`,
      });
    }
    seen.set(tool.name, i);
    const hash = toolHash(tool);
    if (indexedHash(tool.name) === hash) unchanged++;
    else changed.push({ tool, hash });
  });
  return { changed, unchanged };
}
