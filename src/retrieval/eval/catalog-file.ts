import { CatalogFormatError } from '../../errors/catalog-format-error.ts';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { loadNodeFs } from '../../util/node-fs.ts';
import { validateToolDescriptor } from '../tool-fields.ts';
import type { ToolDescriptor } from '../types.ts';

/** One evaluation query: the request and the names of the tools that serve it. */
export type EvalQuery = { id: string; query: string; gold: string[] };

async function readJsonLines(file: string): Promise<{ line: number; value: unknown }[]> {
  const { readFile } = await loadNodeFs();
  const text = await readFile(file, 'utf8');
  const out: { line: number; value: unknown }[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    try {
      out.push({ line: i + 1, value: JSON.parse(raw) });
    } catch (cause) {
      throw new CatalogFormatError({
        file,
        line: i + 1,
        message: `not valid JSON (${(cause as Error).message})`,
        cause,
      });
    }
  });
  return out;
}

/**
 * Reads a tool catalog in JSON lines, one `{ name, description, inputSchema, server? }`
 * per line. Errors name the file and line.
 *
 * @example
 * ```ts
 * const tools = await readToolCatalog('tools.jsonl');
 * await index.upsert(tools);
 * ```
 */
export async function readToolCatalog(file: string): Promise<ToolDescriptor[]> {
  const seen = new Map<string, number>();
  return (await readJsonLines(file)).map(({ line, value }) => {
    let tool: ToolDescriptor;
    try {
      tool = validateToolDescriptor(value, 'tool');
    } catch (error) {
      if (!InvalidArgumentError.isInstance(error)) throw error;
      throw new CatalogFormatError({ file, line, message: error.message, cause: error });
    }
    const first = seen.get(tool.name);
    if (first !== undefined) {
      throw new CatalogFormatError({
        file,
        line,
        message: `duplicate tool name "${tool.name}" (first on line ${first})`,
      });
    }
    seen.set(tool.name, line);
    return tool;
  });
}

/**
 * Reads evaluation queries in JSON lines: `{ id?, query, gold: [tool names] }`.
 *
 * @example
 * ```ts
 * const queries = await readEvalQueries('queries.jsonl');
 * ```
 */
export async function readEvalQueries(file: string): Promise<EvalQuery[]> {
  return (await readJsonLines(file)).map(({ line, value }) => {
    const { id, query, gold } = (value ?? {}) as Record<string, unknown>;
    if (typeof query !== 'string' || query.trim() === '') {
      throw new CatalogFormatError({ file, line, message: '"query" must be a non-empty string' });
    }
    if (
      !Array.isArray(gold) ||
      gold.length === 0 ||
      !gold.every(name => typeof name === 'string')
    ) {
      throw new CatalogFormatError({
        file,
        line,
        message: '"gold" must be a non-empty array of tool names',
      });
    }
    return { id: typeof id === 'string' ? id : `line-${line}`, query, gold: gold as string[] };
  });
}
