import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { afterAll, expect, it } from 'vitest';
import { sweepStaleContainers } from '../../src/internal.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  expectNoLeakedContainers,
} from './sandbox-availability.ts';

/** Creates (without starting) a container labelled as if a sandbox had made it. */
async function labelled({ pid, expires }: { pid: number; expires: number }): Promise<string> {
  const container = await docker.createContainer({
    Image: SANDBOX_IMAGE,
    Cmd: ['true'],
    Labels: {
      'ai-toolbelt.sandbox': '1',
      'ai-toolbelt.sandbox.instance': 'sweep-test',
      'ai-toolbelt.sandbox.host': hostname(),
      'ai-toolbelt.sandbox.pid': String(pid),
      'ai-toolbelt.sandbox.expires': String(expires),
      'ai-toolbelt.sandbox.kind': 'execute',
    },
    HostConfig: { Runtime: 'runsc', NetworkMode: 'none' },
  });
  return container.id;
}

const exists = (id: string) =>
  docker
    .getContainer(id)
    .inspect()
    .then(
      () => true,
      () => false,
    );

describeSandbox('sweep of expired sandbox containers', () => {
  afterAll(async () => {
    await expectNoLeakedContainers();
  });

  it('removes containers past their expiry plus the clock-skew margin, never judging by PID', async () => {
    const deadPid = spawnSync('true').pid!;
    const now = Date.now();
    const expired = await labelled({ pid: process.pid, expires: now - 120_000 });
    // Another host's clock may be up to a minute ahead: not yet.
    const withinSkew = await labelled({ pid: process.pid, expires: now - 10_000 });
    // A PID that does not exist here says nothing: it may live in another PID namespace.
    const otherNamespace = await labelled({ pid: deadPid, expires: now + 3_600_000 });
    const live = await labelled({ pid: process.pid, expires: now + 3_600_000 });
    try {
      const removed = await sweepStaleContainers({ docker, clockSkewMs: 60_000 });
      expect(removed).toContain(expired);
      expect(removed).not.toContain(withinSkew);
      expect(removed).not.toContain(otherNamespace);
      expect(removed).not.toContain(live);
      expect(await exists(expired)).toBe(false);
      for (const kept of [withinSkew, otherNamespace, live]) expect(await exists(kept)).toBe(true);
    } finally {
      for (const id of [expired, withinSkew, otherNamespace, live]) {
        await docker
          .getContainer(id)
          .remove({ force: true })
          .catch(() => {});
      }
    }
  });
});
