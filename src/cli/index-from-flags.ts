import { UsageError } from '../errors/usage-error.ts';
import { readToolCatalog } from '../retrieval/eval/catalog-file.ts';
import { createToolIndex } from '../retrieval/create-tool-index.ts';
import type { ToolIndex } from '../retrieval/tool-index.ts';
import { embedderFromFlags } from './embedder-from-flags.ts';

/** Flags shared by `eval` and `search`. */
export type IndexFlags = {
  tools?: string;
  embedder?: string;
  cache?: string;
  /** Learning from use on (for `eval --learn-from`). */
  learning?: boolean;
  /** Told once, before the tools are read, which retrieval the index uses (one line). */
  onRetrieval?: (line: string) => void;
};

/** A filled tool index, and the close of its embedding model. */
export type IndexFromFlags = AsyncDisposable & { index: ToolIndex; close(): Promise<void> };

/**
 * Builds and fills a tool index from `--tools`, `--embedder auto|lexical|local[:NAME]|openai:MODEL`
 * (see `embedderFromFlags`) and `--cache`, saying which retrieval it uses before embedding
 * (`tool retrieval: hybrid, local all-MiniLM-L6-v2 (…)`, to stderr by default: stdout carries the
 * results). Close it when done: a local model runs in a worker thread.
 *
 * @example
 * ```ts
 * await using built = await indexFromFlags({ tools: 'tools.jsonl' });
 * const hits = await built.index.search('weather in Paris', { topK: 5 });
 * ```
 */
export async function indexFromFlags({
  tools,
  embedder,
  cache,
  learning = false,
  onRetrieval = line => console.error(line),
}: IndexFlags): Promise<IndexFromFlags> {
  if (tools === undefined) throw new UsageError({ message: 'missing --tools <catalog.jsonl>' });
  const catalog = await readToolCatalog(tools);
  const chosen = await embedderFromFlags(embedder === undefined ? {} : { embedder });
  const close = () => chosen.close();
  try {
    onRetrieval(`tool retrieval: ${chosen.description}`);
    const index = createToolIndex({
      ...(chosen.embeddingModel ? { embeddingModel: chosen.embeddingModel } : {}),
      ...(chosen.embeddingModel && cache ? { cache } : {}),
      learning,
    });
    await index.upsert(catalog);
    return { index, close, [Symbol.asyncDispose]: close };
  } catch (error) {
    await close();
    throw error;
  }
}
