import { posix } from 'node:path';
import { safeLabel } from '../../util/untrusted/safe-label.ts';
import { pngSize } from './png-size.ts';
import type { SandboxFile, SandboxImage } from '../types.ts';

/** An artifact record's header as the bootstrap writes it (`file {json}`). */
export type ArtifactMeta = {
  kind: 'image' | 'file';
  path: string;
  mediaType: string;
  bytes: number;
};

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;

/** Checks a record header from the (untrusted) bootstrap; undefined when malformed. */
export function parseArtifactMeta(json: string): ArtifactMeta | undefined {
  let meta: Partial<ArtifactMeta>;
  try {
    meta = JSON.parse(json) as Partial<ArtifactMeta>;
  } catch {
    return undefined;
  }
  const { kind, path, mediaType, bytes } = meta ?? {};
  if (kind !== 'image' && kind !== 'file') return undefined;
  if (typeof path !== 'string' || typeof mediaType !== 'string') return undefined;
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0) return undefined;
  return { kind, path, mediaType, bytes };
}

/**
 * Turns a received artifact into an image or a file, or a note saying why it was dropped.
 * Names lose control and invisible formatting characters first (`safeLabel`: a page shows them
 * and saves files under them), then images must decode as PNG; file paths must stay under
 * `outputs/` and name a file; media types are checked for shape (a UI must still offer files as
 * downloads, never render them inline).
 */
export function toArtifact(
  meta: ArtifactMeta,
  data: Uint8Array,
): { image: SandboxImage } | { file: SandboxFile } | { note: string } {
  const path = posix.normalize(safeLabel(meta.path));
  if (
    path.length > 1024 ||
    path.startsWith('/') ||
    path.endsWith('/') ||
    path.split('/').includes('..')
  ) {
    return { note: 'a returned file with an invalid path was dropped' };
  }
  if (meta.kind === 'image') {
    const size = pngSize(data);
    if (size === undefined) return { note: `${path} was dropped: not a PNG image` };
    return { image: { name: path, mediaType: 'image/png', ...size, data } };
  }
  if (!path.startsWith('outputs/')) {
    return { note: `${path} was dropped: returned files come from /tmp/outputs` };
  }
  const mediaType = MEDIA_TYPE.test(meta.mediaType) ? meta.mediaType : 'application/octet-stream';
  return { file: { path, mediaType, data } };
}
