import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { LocalModelError } from '../errors/local-model-error.ts';
import type { ModelSettings } from './model-spec.ts';
import { MANIFEST_FILE, type ModelManifest } from './models-dir.ts';

/** A model folder, checked: where its graph and tokenizer are, and how to run it. */
export type ModelFolder = {
  /** The folder. */
  path: string;
  /** The model's name (the manifest's, else the folder's). */
  name: string;
  /** The ONNX graph. */
  onnxPath: string;
  /** tokenizer.json, parsed. */
  tokenizer: object;
  /** tokenizer_config.json, parsed ({} when there is none). */
  tokenizerConfig: object;
  settings: ModelSettings;
};

/**
 * Reads and checks a local model folder: one `fetch-model` made (its manifest says how to run
 * the model and which files, of which sizes, it holds), or a sentence-transformers ONNX export
 * (`model.onnx` or `onnx/model.onnx`, `tokenizer.json`, `config.json`, and the pooling, length
 * and normalisation from `1_Pooling/config.json`, `sentence_bert_config.json` and
 * `modules.json`). What is missing or wrong is a {@link LocalModelError} naming the path and
 * `command` (the one that fetches the model).
 *
 * @example
 * ```ts
 * const folder = readModelFolder({ path: '/models/all-MiniLM-L6-v2', command: 'npx ai-toolbelt fetch-model all-MiniLM-L6-v2' });
 * folder.settings.pooling; // 'mean'
 * ```
 */
export function readModelFolder({
  path,
  command,
}: {
  /** The model folder. */
  path: string;
  /** What fixes a missing or broken folder, for the error. */
  command?: string | undefined;
}): ModelFolder {
  const fail = (reason: 'missing' | 'corrupt', message: string, at = path, cause?: unknown) =>
    new LocalModelError({
      reason,
      message,
      path: at,
      ...(command ? { command } : {}),
      ...(cause ? { cause } : {}),
    });
  if (!existsSync(path) || !statSync(path).isDirectory())
    throw fail('missing', `No local embedding model at ${path}.`);
  const json = (file: string): unknown => {
    const at = join(path, file);
    try {
      return JSON.parse(readFileSync(at, 'utf8'));
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
      throw fail(
        missing ? 'missing' : 'corrupt',
        missing ? `The model at ${path} has no ${file}.` : `${at} is not valid JSON.`,
        at,
        error,
      );
    }
  };

  const manifestPath = join(path, MANIFEST_FILE);
  const manifest = existsSync(manifestPath) ? (json(MANIFEST_FILE) as ModelManifest) : undefined;
  if (manifest) {
    for (const file of manifest.files ?? []) {
      const at = join(path, file.path);
      if (!existsSync(at)) throw fail('missing', `The model at ${path} has no ${file.path}.`, at);
      const bytes = statSync(at).size;
      if (bytes !== file.bytes)
        throw fail('corrupt', `${at} has ${bytes} bytes, not ${file.bytes}.`, at);
    }
  }
  const onnxPath = [join(path, 'model.onnx'), join(path, 'onnx', 'model.onnx')].find(at =>
    existsSync(at),
  );
  if (onnxPath === undefined) throw fail('missing', `The model at ${path} has no model.onnx.`);
  const tokenizer = json('tokenizer.json') as object;
  const tokenizerConfig = existsSync(join(path, 'tokenizer_config.json'))
    ? (json('tokenizer_config.json') as object)
    : {};
  const settings = manifest ? settingsOf(manifest) : sentenceTransformersSettings(json, path);
  return {
    path,
    name: manifest?.name ?? basename(path),
    onnxPath,
    tokenizer,
    tokenizerConfig,
    settings,
  };
}

function settingsOf(manifest: ModelManifest): ModelSettings {
  const { dimensions, maxTokens, pooling, normalize, output, tokenTypeIds } = manifest;
  const { queryPrefix, documentPrefix } = manifest;
  return {
    dimensions,
    maxTokens,
    pooling,
    normalize,
    output,
    tokenTypeIds,
    ...(queryPrefix ? { queryPrefix } : {}),
    ...(documentPrefix ? { documentPrefix } : {}),
  };
}

// A sentence-transformers folder says how it pools, how long a text may be and whether it
// normalises; the graph is taken to be a Hugging Face export (last_hidden_state, three inputs).
function sentenceTransformersSettings(json: (file: string) => unknown, path: string) {
  const config = json('config.json') as { hidden_size?: number; max_position_embeddings?: number };
  const optional = (file: string) => (existsSync(join(path, file)) ? json(file) : undefined);
  const pooling = optional('1_Pooling/config.json') as
    { pooling_mode_cls_token?: boolean } | undefined;
  const bert = optional('sentence_bert_config.json') as { max_seq_length?: number } | undefined;
  const modules = optional('modules.json') as { type?: string }[] | undefined;
  return {
    dimensions: config.hidden_size ?? 384,
    maxTokens: bert?.max_seq_length ?? config.max_position_embeddings ?? 512,
    pooling: pooling?.pooling_mode_cls_token ? 'cls' : 'mean',
    normalize: modules?.some(module => module.type?.endsWith('.Normalize')) ?? true,
    output: 'last_hidden_state',
    tokenTypeIds: true,
  } satisfies ModelSettings;
}
