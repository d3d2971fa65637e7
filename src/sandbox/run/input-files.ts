import { posix } from 'node:path';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import type { SandboxInputFile } from '../types.ts';

/**
 * Checks `execute`'s input files and returns them with absolute paths under /tmp and their
 * bytes. Paths are relative to /tmp or absolute under it, without `..`, NUL or duplicates;
 * the count and the total size are capped (the container's /tmp is a small tmpfs).
 *
 * @example
 * ```ts
 * resolveInputFiles({ files: [{ path: 'inputs/a.csv', data: 'x\n1\n' }], maxFiles: 100, maxBytes: 16 << 20 });
 * // [{ path: '/tmp/inputs/a.csv', data: Uint8Array }]
 * ```
 */
export function resolveInputFiles({
  files,
  maxFiles,
  maxBytes,
}: {
  /** What the caller passed as `files`. */
  files: unknown;
  /** Most files accepted. */
  maxFiles: number;
  /** Most bytes accepted, all files together. */
  maxBytes: number;
}): Array<{ path: string; data: Uint8Array }> {
  if (files === undefined) return [];
  if (!Array.isArray(files)) {
    throw new InvalidArgumentError({
      argument: 'files',
      value: files,
      message: 'must be an array of { path, data }',
    });
  }
  if (files.length > maxFiles) {
    throw new InvalidArgumentError({
      argument: 'files',
      value: `${files.length} files`,
      message: `must hold at most ${maxFiles} files (maxInputFiles)`,
    });
  }
  const seen = new Set<string>();
  let total = 0;
  return files.map((file: Partial<SandboxInputFile> | null, i) => {
    const path = resolvePath(file?.path, `files[${i}].path`);
    if (seen.has(path)) {
      throw new InvalidArgumentError({
        argument: `files[${i}].path`,
        value: file?.path,
        message: `names ${path} a second time`,
      });
    }
    seen.add(path);
    const raw = file?.data;
    const data =
      typeof raw === 'string'
        ? new TextEncoder().encode(raw)
        : raw instanceof Uint8Array
          ? raw
          : undefined;
    if (data === undefined) {
      throw new InvalidArgumentError({
        argument: `files[${i}].data`,
        value: raw,
        message: 'must be a string or a Uint8Array',
      });
    }
    total += data.byteLength;
    if (total > maxBytes) {
      throw new InvalidArgumentError({
        argument: `files[${i}].data`,
        value: `${data.byteLength} bytes`,
        message: `brings the input files to ${total} bytes, over the ${maxBytes}-byte limit (maxInputBytes)`,
      });
    }
    return { path, data };
  });
}

function resolvePath(path: unknown, argument: string): string {
  const fail = (message: string): never => {
    throw new InvalidArgumentError({ argument, value: path, message });
  };
  if (typeof path !== 'string' || path.length === 0) return fail('must be a non-empty string');
  if (path.length > 1024 || path.includes('\0'))
    return fail('must be at most 1024 characters, without NUL');
  if (path.split(/[\\/]/).includes('..')) return fail('must not contain `..`');
  const absolute = posix.normalize(path.startsWith('/') ? path : `/tmp/${path}`);
  if (!absolute.startsWith('/tmp/') || absolute.endsWith('/')) {
    return fail('must name a file under /tmp (relative paths are taken from /tmp)');
  }
  return absolute;
}
