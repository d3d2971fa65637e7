import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModel } from 'ai';

/** The message chat requests get, and the page shows, when no model is configured. */
export const MISSING_MODEL_MESSAGE =
  'No language model is configured. Set OPENAI_API_KEY (and OPENAI_BASE_URL for any ' +
  'OpenAI-compatible server, e.g. a local one; OPENAI_MODEL picks the model), then restart the server.';

/**
 * The chat model from the environment, read per request so a restart is the only
 * step after setting it: `OPENAI_API_KEY` (any value for keyless local servers),
 * `OPENAI_BASE_URL`, `OPENAI_MODEL` (default `gpt-4.1-mini`) and `OPENAI_API`
 * (`chat`, the default, which OpenAI-compatible servers speak, or `responses`).
 *
 * @example
 * ```ts
 * const model = chatModel();
 * if (!model) return Response.json({ error: MISSING_MODEL_MESSAGE }, { status: 503 });
 * ```
 */
export function chatModel(env = process.env): Exclude<LanguageModel, string> | undefined {
  if (!env.OPENAI_API_KEY) return undefined;
  const openai = createOpenAI({
    apiKey: env.OPENAI_API_KEY,
    ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
  });
  const id = env.OPENAI_MODEL || 'gpt-4.1-mini';
  return env.OPENAI_API === 'responses' ? openai.responses(id) : openai.chat(id);
}

/**
 * The model server's host, shown on the page and in the log: never a path, query or credentials
 * (a proxy's URL can carry a token).
 */
export function modelHost(env: Record<string, string | undefined>): string {
  if (!env.OPENAI_BASE_URL) return 'api.openai.com';
  try {
    return new URL(env.OPENAI_BASE_URL).host;
  } catch {
    return 'OPENAI_BASE_URL (not a URL)';
  }
}

/** Which model chat uses, for the page header (the server's host, not its whole URL). */
export function modelDescription(env = process.env): string {
  const id = env.OPENAI_MODEL || 'gpt-4.1-mini';
  return `${id} at ${modelHost(env)}`;
}
