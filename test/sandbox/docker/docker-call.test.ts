import { describe, expect, it } from 'vitest';
import { DockerTimeoutError } from '../../../src/errors/docker-timeout-error.ts';
import { dockerCall } from '../../../src/sandbox/docker/docker-call.ts';

describe('dockerCall', () => {
  it('fails a hung call with DockerTimeoutError and aborts its request', async () => {
    let signal: AbortSignal | undefined;
    const error = await dockerCall({
      operation: 'container start',
      timeoutMs: 30,
      call: abortSignal => {
        signal = abortSignal;
        return new Promise(() => {});
      },
    }).catch((e: unknown) => e);
    expect(DockerTimeoutError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ operation: 'container start', timeoutMs: 30 });
    expect(signal?.aborted).toBe(true);
  });

  it('passes results and errors through', async () => {
    await expect(
      dockerCall({ operation: 'x', timeoutMs: 1_000, call: async () => 7 }),
    ).resolves.toBe(7);
    await expect(
      dockerCall({
        operation: 'x',
        timeoutMs: 1_000,
        call: async () => {
          throw new Error('HTTP 500');
        },
      }),
    ).rejects.toThrow('HTTP 500');
  });
});
