// Docker records an exit and the OOM kill behind it from two events that race: the state read
// right after a SIGKILL exit can still say OOMKilled: false. The engine tests (hostile-code)
// meet the race now and then; these pin down the re-reads with a scripted inspect.
import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { exitedState } from '../../../src/sandbox/docker/exited-state.ts';

type State = Pick<Docker.ContainerInspectInfo['State'], 'Running' | 'ExitCode' | 'OOMKilled'>;

/** A container whose inspects return `states` in turn (the last one repeats), counting them. */
function scripted(states: State[]) {
  let calls = 0;
  const container = {
    inspect: async () => ({ State: states[Math.min(calls++, states.length - 1)] }),
  } as unknown as Docker.Container;
  return { container, calls: () => calls };
}

const exited = (ExitCode: number, OOMKilled = false): State => ({
  Running: false,
  ExitCode,
  OOMKilled,
});

describe('exitedState', () => {
  it('reads a SIGKILL exit again until Docker has recorded the OOM kill', async () => {
    const { container, calls } = scripted([exited(137), exited(137), exited(137, true)]);
    const state = await exitedState({ container, dockerTimeoutMs: 1_000, stepMs: 1 });
    expect(state).toMatchObject({ ExitCode: 137, OOMKilled: true });
    expect(calls()).toBe(3);
  });

  it('gives up after settleMs on a SIGKILL exit that was no OOM kill', async () => {
    const { container, calls } = scripted([exited(137)]);
    const started = performance.now();
    const state = await exitedState({
      container,
      dockerTimeoutMs: 1_000,
      settleMs: 60,
      stepMs: 10,
    });
    expect(state.OOMKilled).toBe(false);
    expect(performance.now() - started).toBeGreaterThanOrEqual(60);
    expect(calls()).toBeGreaterThan(1);
    expect(calls()).toBeLessThanOrEqual(8);
  });

  it('reads once for any other exit, a running container or an OOM kill already recorded', async () => {
    for (const state of [
      exited(1),
      exited(2),
      exited(137, true),
      { Running: true, ExitCode: 0, OOMKilled: false },
    ]) {
      const { container, calls } = scripted([state, exited(137, true)]);
      expect(await exitedState({ container, dockerTimeoutMs: 1_000 })).toEqual(state);
      expect(calls()).toBe(1);
    }
  });
});
