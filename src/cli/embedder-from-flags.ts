import type { EmbeddingModel } from 'ai';
import { LocalModelError } from '../errors/local-model-error.ts';
import { UsageError } from '../errors/usage-error.ts';

/** What `--embedder` chose: the model (none for lexical), one line saying which, and its close. */
export type ChosenEmbedder = {
  /** The embedding model; undefined means lexical retrieval. */
  embeddingModel?: EmbeddingModel;
  /**
   * One line: `hybrid, local all-MiniLM-L6-v2 (/…/models/all-MiniLM-L6-v2)`,
   * `hybrid, openai:text-embedding-3-small` or `lexical (why)`.
   */
  description: string;
  /** Ends the local model's worker thread (nothing to end otherwise). */
  close(): Promise<void>;
};

/** The provider's model `auto` takes when `OPENAI_API_KEY` is set and no local model is. */
export const AUTO_OPENAI_EMBEDDING_MODEL = 'text-embedding-3-small';

const NO_MODEL =
  'no embedding model: run npx ai-toolbelt fetch-model for the local one, or set OPENAI_API_KEY';
const lexical = (why: string): ChosenEmbedder => ({
  description: `lexical (${why})`,
  close: async () => {},
});

/**
 * Resolves `--embedder`: `lexical`, `local[:NAME]` (a model `fetch-model` installed, or a model
 * folder's path), `openai:MODEL`, or `auto` (the default): the local model when it is installed,
 * else OpenAI's `text-embedding-3-small` when `OPENAI_API_KEY` is set, else lexical. What is named
 * must work (an error says what to run); `auto` moves on to the next choice and says why in the
 * description. The local model is loaded here, so a broken one fails before any tool is embedded.
 *
 * @example
 * ```ts
 * await using chosen = await embedderFromFlags({ embedder: 'auto' });
 * console.error(`tool retrieval: ${chosen.description}`);
 * ```
 */
export async function embedderFromFlags({
  embedder = 'auto',
  env = process.env,
}: {
  /** The `--embedder` value. */
  embedder?: string;
  /** Where `OPENAI_API_KEY` and `AI_TOOLBELT_MODELS_DIR` are read. */
  env?: NodeJS.ProcessEnv;
} = {}): Promise<ChosenEmbedder & AsyncDisposable> {
  const chosen = await choose(embedder, env);
  return { ...chosen, [Symbol.asyncDispose]: chosen.close };
}

async function choose(embedder: string, env: NodeJS.ProcessEnv): Promise<ChosenEmbedder> {
  if (embedder === 'lexical') return lexical('--embedder lexical');
  if (embedder === 'local' || embedder.startsWith('local:')) {
    return local(embedder.slice('local:'.length) || undefined, env);
  }
  if (embedder.startsWith('openai:') && embedder.length > 'openai:'.length) {
    return openai(embedder.slice('openai:'.length));
  }
  if (embedder !== 'auto') {
    throw new UsageError({
      message: `unknown --embedder "${embedder}"; use "auto", "lexical", "local[:NAME]" or "openai:<model>"`,
    });
  }
  let skipped = '';
  try {
    return await local(undefined, env);
  } catch (error) {
    // Not installed is the ordinary case; anything else (a broken folder, onnxruntime-node
    // missing) is worth saying, but still not a reason to stop.
    if (!(LocalModelError.isInstance(error) && error.reason === 'missing'))
      skipped = `the local model failed to load: ${(error as Error).message}; `;
  }
  if (env.OPENAI_API_KEY) {
    try {
      return await openai(AUTO_OPENAI_EMBEDDING_MODEL);
    } catch (error) {
      return lexical(`${skipped}${(error as Error).message}`);
    }
  }
  return lexical(skipped ? `${skipped}and OPENAI_API_KEY is not set` : NO_MODEL);
}

// `local` or `local:NAME`: a model fetch-model knows, by name, or a folder of one's own, by path.
async function local(name: string | undefined, env: NodeJS.ProcessEnv): Promise<ChosenEmbedder> {
  const { LOCAL_MODELS, defaultModelsDir, localEmbeddingModel } =
    await import('../local-embedding/index.ts');
  const byPath =
    name !== undefined && !LOCAL_MODELS.some(spec => spec.name === name) && /[\\/]/.test(name);
  const model = localEmbeddingModel({
    modelsDir: defaultModelsDir(env),
    ...(name === undefined ? {} : byPath ? { path: name } : { model: name }),
  });
  try {
    await model.load();
  } catch (error) {
    await model.close();
    throw error;
  }
  return {
    embeddingModel: model,
    description: `hybrid, local ${model.modelId} (${model.path})`,
    close: () => model.close(),
  };
}

// OpenAI, or any OpenAI-compatible server through OPENAI_BASE_URL; loaded only when asked for.
async function openai(model: string): Promise<ChosenEmbedder> {
  const { openai } = await import('@ai-sdk/openai').catch((error: unknown) => {
    if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new UsageError({
      message: 'an openai:MODEL embedder needs @ai-sdk/openai: npm install @ai-sdk/openai',
    });
  });
  return {
    embeddingModel: openai.embedding(model),
    description: `hybrid, openai:${model}`,
    close: async () => {},
  };
}
