import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ModelSettings } from './model-spec.ts';

/** The file `fetch-model` writes last into a model folder: the model's settings and files. */
export const MANIFEST_FILE = 'ai-toolbelt-model.json';

/** What {@link MANIFEST_FILE} holds. */
export type ModelManifest = ModelSettings & {
  /** The model's name (`fetch-model NAME`). */
  name: string;
  /** Each file of the folder with its SHA-256 and size, as fetched. */
  files: { path: string; sha256: string; bytes: number }[];
};

/**
 * Where fetched models live, one folder per model: `AI_TOOLBELT_MODELS_DIR` when set, else
 * `ai-toolbelt/models` under `XDG_CACHE_HOME` (default `~/.cache`).
 *
 * @example
 * ```ts
 * join(defaultModelsDir(), 'all-MiniLM-L6-v2'); // ~/.cache/ai-toolbelt/models/all-MiniLM-L6-v2
 * ```
 */
export function defaultModelsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AI_TOOLBELT_MODELS_DIR) return env.AI_TOOLBELT_MODELS_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ai-toolbelt', 'models');
}

/**
 * The command that fetches `model` into `modelsDir` (the default folder needs no flag), for
 * error messages.
 *
 * @example
 * ```ts
 * fetchCommand('all-MiniLM-L6-v2'); // 'npx ai-toolbelt fetch-model all-MiniLM-L6-v2'
 * ```
 */
export function fetchCommand(model: string, modelsDir?: string): string {
  const dir = modelsDir && modelsDir !== defaultModelsDir() ? ` --dir ${modelsDir}` : '';
  return `npx ai-toolbelt fetch-model ${model}${dir}`;
}
