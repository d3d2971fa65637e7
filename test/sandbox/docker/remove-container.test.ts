import { describe, expect, it } from 'vitest';
import { isExitRace, removeContainer } from '../../../src/sandbox/docker/remove-container.ts';

/** docker-modem's error for an engine answer, as CI met it on a TLS engine. */
function engineError(statusCode: number, message: string) {
  return Object.assign(new Error(`(HTTP code ${statusCode}) server error - ${message}`), {
    reason: 'server error',
    statusCode,
    json: { message },
  });
}

const RACE =
  'Could not kill running container 4b705f866dd0, cannot remove - Container 4b705f866dd0 is not running';

/** A container whose removals answer with `answers` in turn (undefined: removed). */
function container(answers: (Error | undefined)[]) {
  const calls: { force?: boolean; v?: boolean }[] = [];
  return {
    calls,
    remove: async (options: { force?: boolean; v?: boolean }) => {
      calls.push(options);
      const answer = answers.shift();
      if (answer !== undefined) throw answer;
    },
  };
}

describe('removeContainer', () => {
  it('tries again when the force removal met the container just as it exited', async () => {
    const c = container([engineError(500, RACE), engineError(500, RACE), undefined]);
    await removeContainer({ container: c as never, dockerTimeoutMs: 1_000, retryDelayMs: 1 });
    expect(c.calls).toHaveLength(3);
    expect(c.calls[2]).toMatchObject({ force: true, v: true });
  });

  it('gives up after four attempts with the engine error', async () => {
    const c = container(Array.from({ length: 6 }, () => engineError(500, RACE)));
    await expect(
      removeContainer({ container: c as never, dockerTimeoutMs: 1_000, retryDelayMs: 1 }),
    ).rejects.toMatchObject({ statusCode: 500 });
    expect(c.calls).toHaveLength(4);
  });

  it('passes any other error on at once', async () => {
    const c = container([engineError(500, 'driver failed to remove root filesystem'), undefined]);
    await expect(
      removeContainer({ container: c as never, dockerTimeoutMs: 1_000, retryDelayMs: 1 }),
    ).rejects.toThrow('driver failed');
    expect(c.calls).toHaveLength(1);
  });

  it('recognises only the exit race', () => {
    expect(isExitRace(engineError(500, RACE))).toBe(true);
    expect(isExitRace(engineError(409, RACE))).toBe(false);
    expect(isExitRace(engineError(500, 'Container abc is not running'))).toBe(false);
    expect(isExitRace(new Error(RACE))).toBe(false);
    expect(isExitRace(undefined)).toBe(false);
  });
});
