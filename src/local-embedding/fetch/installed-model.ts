import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { LocalModelSpec } from '../local-models.ts';
import { defaultModelsDir, MANIFEST_FILE, type ModelManifest } from '../models-dir.ts';

/**
 * The manifest `fetch-model` writes for `spec`: its name, how to run it, and each file's
 * SHA-256 and size.
 *
 * @example
 * ```ts
 * modelManifest(spec).files.map(file => file.path); // ['model.onnx', 'tokenizer.json', …]
 * ```
 */
export function modelManifest(spec: LocalModelSpec): ModelManifest {
  // Everything but where the files come from: the name and every setting (the runtime's).
  const {
    description: _description,
    licence: _licence,
    packages: _packages,
    archives: _archives,
    files,
    ...rest
  } = spec;
  return { ...rest, files: files.map(({ path, sha256, bytes }) => ({ path, sha256, bytes })) };
}

/**
 * Whether `<modelsDir>/<name>` holds `spec` as this version of the library would fetch it: a
 * manifest equal to {@link modelManifest} (same files, same hashes, same settings) and every
 * file there at its size. Sizes only: hashing 90 MB on every start would cost more than the
 * partial or swapped file it could catch (the manifest is written last, after each hash was
 * checked).
 *
 * @example
 * ```ts
 * if (!(await isModelInstalled({ spec }))) await fetchModel({ model: spec.name });
 * ```
 */
export async function isModelInstalled({
  spec,
  modelsDir = defaultModelsDir(),
}: {
  /** The model. */
  spec: LocalModelSpec;
  /** The folder of model folders. */
  modelsDir?: string;
}): Promise<boolean> {
  const path = join(modelsDir, spec.name);
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(join(path, MANIFEST_FILE), 'utf8'));
  } catch {
    return false;
  }
  // A registry that moved on (another wheel, a re-exported graph, new settings) makes an older
  // folder stale even when every file is still there.
  if (!isDeepStrictEqual(manifest, modelManifest(spec))) return false;
  for (const file of spec.files) {
    const size = await stat(join(path, file.path)).then(
      found => (found.isFile() ? found.size : -1),
      () => -1,
    );
    if (size !== file.bytes) return false;
  }
  return true;
}
