import { UsageError } from '../errors/usage-error.ts';
import { readToolCatalog } from '../retrieval/eval/catalog-file.ts';
import { createToolIndex } from '../retrieval/create-tool-index.ts';
import type { ToolIndex } from '../retrieval/tool-index.ts';

/** Flags shared by `eval` and `search`. */
export type IndexFlags = {
  tools?: string;
  embedder?: string;
  cache?: string;
  /** Learning from use on (for `eval --learn-from`). */
  learning?: boolean;
};

/**
 * Builds and fills a tool index from `--tools`, `--embedder lexical|openai:MODEL`
 * and `--cache`. OpenAI (or any OpenAI-compatible server through
 * `OPENAI_BASE_URL`) is loaded only when asked for.
 */
export async function indexFromFlags({
  tools,
  embedder = 'lexical',
  cache,
  learning = false,
}: IndexFlags): Promise<ToolIndex> {
  if (tools === undefined) throw new UsageError({ message: 'missing --tools <catalog.jsonl>' });
  let index: ToolIndex;
  if (embedder === 'lexical') {
    index = createToolIndex({ learning });
  } else if (embedder.startsWith('openai:') && embedder.length > 'openai:'.length) {
    const { openai } = await import('@ai-sdk/openai').catch((error: unknown) => {
      if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
      throw new UsageError({
        message: '--embedder openai:MODEL needs @ai-sdk/openai: npm install @ai-sdk/openai',
      });
    });
    index = createToolIndex({
      embeddingModel: openai.embedding(embedder.slice('openai:'.length)),
      ...(cache ? { cache } : {}),
      learning,
    });
  } else {
    throw new UsageError({
      message: `unknown --embedder "${embedder}"; use "lexical" or "openai:<model>"`,
    });
  }
  await index.upsert(await readToolCatalog(tools));
  return index;
}
