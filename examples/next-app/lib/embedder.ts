// The same choice as examples/hono-server/src/embedder-from-env.ts on purpose: each example stands
// alone (Next loads ai-toolbelt/local-embedding unbundled, below).
import { createOpenAI } from '@ai-sdk/openai';
import type { EmbeddingModel } from 'ai';
import type { LocalModelError } from 'ai-toolbelt/local-embedding';
import { modelHost } from './model';

/** What {@link embedderFromEnv} chose. */
export type EmbedderSetup = {
  /** Embeddings for hybrid tool retrieval; undefined: lexical. */
  embeddingModel?: EmbeddingModel;
  /**
   * The embedding model and where it runs (`local all-MiniLM-L6-v2 (/…/models/all-MiniLM-L6-v2)`,
   * `openai:text-embedding-3-small at api.openai.com`), or why there is none, for the log.
   */
  description: string;
  /** Ends the local model's worker thread (nothing to end for a provider's model). */
  close(): Promise<void>;
};

/** The provider's embedding model when `OPENAI_EMBEDDING_MODEL` is not set. */
export const DEFAULT_EMBEDDING_MODEL = 'text-embedding-3-small';

const FETCH_HINT = 'run npx ai-toolbelt fetch-model for the local one';

/**
 * The embedding model for tool retrieval, from the environment. The first that applies:
 *
 * 1. `EMBEDDER`: `lexical`, `local` or `local:NAME` (a model `fetch-model` installed), or
 *    `openai` / `openai:MODEL` (needs `OPENAI_API_KEY`). `auto` (or unset) goes on.
 * 2. `OPENAI_EMBEDDING_MODEL=MODEL` with `OPENAI_API_KEY`: that model of the provider.
 * 3. The local model (`npx ai-toolbelt fetch-model`; `npm start` fetches it once), when installed
 *    in `AI_TOOLBELT_MODELS_DIR` (default `~/.cache/ai-toolbelt/models`).
 * 4. With `OPENAI_API_KEY`: `text-embedding-3-small` at `OPENAI_BASE_URL`, unless
 *    `OPENAI_EMBEDDING_MODEL=off` (a server without embeddings).
 * 5. None: lexical selection, and `description` says what would give one.
 *
 * A model that is named but cannot be used (no key, a local model not installed) is no model,
 * with the reason: the toolbelt still opens. The Hono example's `src/embedder-from-env.ts` is
 * the same function.
 *
 * @example
 * ```ts
 * const embedder = await embedderFromEnv();
 * console.log(embedder.embeddingModel ? `hybrid, ${embedder.description}` : `lexical (${embedder.description})`);
 * ```
 */
export async function embedderFromEnv(
  env: Record<string, string | undefined> = process.env,
): Promise<EmbedderSetup> {
  const chosen = env.EMBEDDER || 'auto';
  const explicitProvider = env.OPENAI_EMBEDDING_MODEL && env.OPENAI_EMBEDDING_MODEL !== 'off';
  if (chosen === 'lexical') return none('EMBEDDER=lexical');
  if (chosen === 'local' || chosen.startsWith('local:')) {
    const local = await localModel(env, chosen.slice('local:'.length) || undefined);
    return 'error' in local ? none(local.error.message) : local;
  }
  if (chosen === 'openai' || chosen.startsWith('openai:')) {
    if (!env.OPENAI_API_KEY) return none(`EMBEDDER=${chosen} needs OPENAI_API_KEY`);
    const id = chosen.slice('openai:'.length) || (explicitProvider && env.OPENAI_EMBEDDING_MODEL);
    return provider(env, id || DEFAULT_EMBEDDING_MODEL);
  }
  if (chosen !== 'auto')
    return none(`EMBEDDER=${chosen} is none of auto, lexical, local[:NAME], openai[:MODEL]`);

  if (env.OPENAI_API_KEY && explicitProvider) return provider(env, env.OPENAI_EMBEDDING_MODEL!);
  const local = await localModel(env);
  if (!('error' in local)) return local;
  // Not installed is the ordinary case; a broken folder is worth saying.
  const broken = local.error.reason === 'missing' ? '' : `${local.error.message}; `;
  if (env.OPENAI_API_KEY && env.OPENAI_EMBEDDING_MODEL !== 'off') {
    const fromKey = provider(env, DEFAULT_EMBEDDING_MODEL);
    if (!broken) return fromKey;
    return {
      ...fromKey,
      description: `${fromKey.description} (not local: ${local.error.message})`,
    };
  }
  return none(
    env.OPENAI_API_KEY
      ? `${broken}no embedding model: OPENAI_EMBEDDING_MODEL=off; ${FETCH_HINT}`
      : `${broken}no embedding model: ${FETCH_HINT}, or set OPENAI_API_KEY`,
  );
}

function none(description: string): EmbedderSetup {
  return { description, close: async () => {} };
}

// The folder is checked at once (a LocalModelError when it is missing); the model loads when the
// tools are first embedded, in a worker thread that close() ends.
async function localModel(
  env: Record<string, string | undefined>,
  model?: string,
): Promise<EmbedderSetup | { error: LocalModelError }> {
  // Loaded by Node from node_modules when the server runs, never bundled: the model's worker
  // thread starts from a file beside the library's own (dist/local-embedding/worker/), which a
  // bundle does not have. serverExternalPackages (next.config.ts) would do the same for an
  // installed ai-toolbelt, but Turbopack bundles a package linked from outside node_modules, as
  // this repository's is.
  const { LocalModelError, defaultModelsDir, localEmbeddingModel } = await import(
    /* webpackIgnore: true */ /* turbopackIgnore: true */ 'ai-toolbelt/local-embedding'
  );
  try {
    const local = localEmbeddingModel({
      modelsDir: defaultModelsDir(env as NodeJS.ProcessEnv),
      ...(model ? { model } : {}),
    });
    return {
      embeddingModel: local,
      description: `local ${local.modelId} (${local.path})`,
      close: () => local.close(),
    };
  } catch (error) {
    if (LocalModelError.isInstance(error)) return { error };
    throw error;
  }
}

function provider(env: Record<string, string | undefined>, id: string): EmbedderSetup {
  const baseURL = env.OPENAI_BASE_URL || undefined;
  const openai = createOpenAI({ apiKey: env.OPENAI_API_KEY, ...(baseURL ? { baseURL } : {}) });
  return {
    embeddingModel: openai.embedding(id),
    description: `openai:${id} at ${modelHost(env)}`,
    close: async () => {},
  };
}
