import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { afterAll, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors/invalid-argument-error.ts';
import { sweepStaleContainers } from '../../../src/internal.ts';
import { resolveFleetOptions } from '../../../src/sandbox/options/fleet-options.ts';
import { SCOPE_LABEL } from '../../../src/sandbox/driver/labels.ts';
import {
  SANDBOX_IMAGE,
  describeSandbox,
  docker,
  expectNoLeakedContainers,
} from '../sandbox-availability.ts';

// The engine is shared with every other test file (and other checkouts) running at once, and
// each of their sandboxes sweeps it. This file's containers carry a scope of their own, so no
// other sweep touches them, and its sweeps pass that scope, so they touch nothing else.
const scope = `sweep-test-${randomUUID().slice(0, 8)}`;
const made: string[] = [];

/** Creates (without starting) a container labelled as if a sandbox of this scope had made it. */
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
      [SCOPE_LABEL]: scope,
    },
    HostConfig: { Runtime: 'runsc', NetworkMode: 'none' },
  });
  made.push(container.id);
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
    for (const id of made) {
      await docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => {});
    }
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
    const removed = await sweepStaleContainers({ docker, clockSkewMs: 60_000, scope });
    expect(removed).toContain(expired);
    expect(removed).not.toContain(withinSkew);
    expect(removed).not.toContain(otherNamespace);
    expect(removed).not.toContain(live);
    expect(await exists(expired)).toBe(false);
    for (const kept of [withinSkew, otherNamespace, live]) expect(await exists(kept)).toBe(true);
  });

  it('sweeps of no scope, or of another, leave a scope’s expired containers to that scope', async () => {
    const expired = await labelled({ pid: process.pid, expires: Date.now() - 120_000 });
    // What every other sandbox on the engine runs at start-up and every sweepIntervalMs.
    const unscoped = await sweepStaleContainers({ docker, clockSkewMs: 60_000 });
    const otherScope = await sweepStaleContainers({
      docker,
      clockSkewMs: 60_000,
      scope: `${scope}-other`,
    });
    expect([...unscoped, ...otherScope]).not.toContain(expired);
    expect(await exists(expired)).toBe(true);
    expect(await sweepStaleContainers({ docker, clockSkewMs: 60_000, scope })).toEqual([expired]);
    expect(await exists(expired)).toBe(false);
  });
});

it('refuses a scope that cannot be a label value, naming the option', () => {
  for (const scope of ['', 'a b', 'x'.repeat(64), 'a=b']) {
    let thrown: unknown;
    try {
      resolveFleetOptions({ scope });
    } catch (error) {
      thrown = error;
    }
    expect(InvalidArgumentError.isInstance(thrown)).toBe(true);
    expect((thrown as InvalidArgumentError).argument).toBe('scope');
  }
  expect(resolveFleetOptions({ scope: 'billing-v2.eu_1' }).scope).toBe('billing-v2.eu_1');
});
