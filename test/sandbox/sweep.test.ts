import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { afterAll, expect, it } from 'vitest';
import { sweepStaleContainers } from '../../src/sandbox/index.ts';
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

describeSandbox('start-up sweep of stale sandbox containers', () => {
  afterAll(async () => {
    await expectNoLeakedContainers();
  });

  it('removes containers of dead processes and expired ones, and keeps live ones', async () => {
    const deadPid = spawnSync('true').pid!;
    const hourFromNow = Date.now() + 3_600_000;
    const orphan = await labelled({ pid: deadPid, expires: hourFromNow });
    const expired = await labelled({ pid: process.pid, expires: Date.now() - 1_000 });
    const live = await labelled({ pid: process.pid, expires: hourFromNow });
    try {
      const removed = await sweepStaleContainers({ docker });
      expect(removed).toEqual(expect.arrayContaining([orphan, expired]));
      expect(removed).not.toContain(live);
      expect(await exists(orphan)).toBe(false);
      expect(await exists(expired)).toBe(false);
      expect(await exists(live)).toBe(true);
    } finally {
      for (const id of [orphan, expired, live]) {
        await docker
          .getContainer(id)
          .remove({ force: true })
          .catch(() => {});
      }
    }
  });
});
