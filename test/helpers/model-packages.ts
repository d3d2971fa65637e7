import { buffer } from 'node:stream/consumers';
import { expect } from 'vitest';
import { ZipFile } from 'yazl';
import { LocalModelError } from '../../src/errors/local-model-error.ts';

/** A zip of these members, as a wheel or a jar is. */
export async function zipOf(members: Record<string, Buffer>): Promise<Buffer> {
  const zip = new ZipFile();
  for (const [name, data] of Object.entries(members)) zip.addBuffer(data, name);
  zip.end();
  return buffer(zip.outputStream);
}

/** What `promise` rejects with: it must reject, with a `LocalModelError`. */
export async function rejection(promise: Promise<unknown>): Promise<LocalModelError> {
  const error = await promise.then(
    () => expect.fail('resolved'),
    (error: unknown) => error,
  );
  expect(LocalModelError.isInstance(error), String(error)).toBe(true);
  return error as LocalModelError;
}
