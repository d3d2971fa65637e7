import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModel } from 'ai';

/** A model object, as `chatResponse` wraps it (not a gateway id string). */
export type ChatModel = Exclude<LanguageModel, string>;

/** What {@link modelFromEnv} found. */
export type ModelSetup = {
  /** The chat model, or undefined when nothing is configured. */
  model?: ChatModel;
  /** Model id and where it is served, for logs and /healthz. */
  description: string;
  /** Set when there is no model: what to set, shown on the page and in chat errors. */
  problem?: string;
};

/** The message chat requests get when no model is configured. */
export const MISSING_MODEL_MESSAGE =
  'No language model is configured. Set OPENAI_API_KEY (and OPENAI_BASE_URL for any ' +
  'OpenAI-compatible server, e.g. a local one; OPENAI_MODEL picks the model), then restart the server.';

/**
 * The chat model from the environment: `OPENAI_API_KEY` (required; any value for
 * keyless local servers), `OPENAI_BASE_URL`, `OPENAI_MODEL` (default `gpt-4.1-mini`),
 * `OPENAI_API` (`chat`, the default, for chat completions, which OpenAI-compatible
 * servers speak; `responses` for OpenAI's Responses API). Tool retrieval's embedding
 * model is `embedderFromEnv`'s.
 *
 * @example
 * ```ts
 * const { model, problem } = modelFromEnv(process.env);
 * if (!model) console.warn(problem);
 * ```
 */
export function modelFromEnv(env: Record<string, string | undefined>): ModelSetup {
  const modelId = env.OPENAI_MODEL || 'gpt-4.1-mini';
  const baseURL = env.OPENAI_BASE_URL || undefined;
  // Shown on the page and in /healthz: the host only, never a path, query or credentials
  // (a proxy's URL can carry a token).
  const where = baseURL ? hostOf(baseURL) : 'api.openai.com';
  if (!env.OPENAI_API_KEY) {
    return {
      description: `none (${modelId} at ${where} once configured)`,
      problem: MISSING_MODEL_MESSAGE,
    };
  }
  const openai = createOpenAI({ apiKey: env.OPENAI_API_KEY, ...(baseURL ? { baseURL } : {}) });
  const api = env.OPENAI_API === 'responses' ? 'responses' : 'chat';
  return {
    model: api === 'responses' ? openai.responses(modelId) : openai.chat(modelId),
    description: `${modelId} (${api} API at ${where})`,
  };
}

/** A server's host for logs and /healthz: never its path, query or credentials. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'OPENAI_BASE_URL (not a URL)';
  }
}
