// Conversation interpreters placed at once, by many users: the bounds hold (issue 38, finding 1).
import { expect, it } from 'vitest';
import { SandboxBusyError } from '../../../src/errors/sandbox-busy-error.ts';
import type { DockerSandbox } from '../../../src/sandbox/index.ts';
import { describeSandbox, suiteSandbox } from '../sandbox-availability.ts';
import { liveInterpreters } from './live-interpreters.ts';

const interpreters = async (sandbox: DockerSandbox) =>
  (await liveInterpreters(sandbox, ['created', 'running'])).length;

describeSandbox('conversation interpreters placed at once', () => {
  let sandbox: DockerSandbox;
  suiteSandbox(
    {
      warmPoolSize: 0,
      preimport: [],
      scope: `placement-${process.pid}`,
      conversations: {
        maxInterpreters: 4,
        maxPerEngine: 4,
        warmPoolSize: 0,
        maxConcurrentStarts: 2,
      },
    },
    created => {
      sandbox = created;
    },
  );

  it('twelve users at once against maxInterpreters 4: at most 4 live, the rest typed busy', async () => {
    // The most interpreters seen at any time, sampled while the placements run.
    let peak = 0;
    let placing = true;
    const sampling = (async () => {
      while (placing) peak = Math.max(peak, await interpreters(sandbox));
    })();
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        sandbox.executeCell('x = 1', { conversation: { id: `chat-${i}`, userId: `user-${i}` } }),
      ),
    );
    placing = false;
    await sampling;
    const refused = results.filter(result => result.status === 'rejected');
    for (const { reason } of refused as PromiseRejectedResult[]) {
      expect(SandboxBusyError.isInstance(reason), String(reason)).toBe(true);
      expect(reason).toMatchObject({ resource: 'interpreters', limit: 4, retryAfterMs: 5_000 });
    }
    expect(results.length - refused.length).toBe(4);
    expect(peak).toBeLessThanOrEqual(4);
    expect(await interpreters(sandbox)).toBe(4);
  }, 120_000);
});
