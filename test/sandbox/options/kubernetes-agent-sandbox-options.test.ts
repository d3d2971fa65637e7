import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors/invalid-argument-error.ts';
import {
  kubernetesFromEnv,
  resolveKubernetesEngine,
} from '../../../src/sandbox/options/kubernetes-options.ts';

// The Kubernetes engine's `agentSandbox` option: off unless asked, `true` or a pool size, and a
// bad value names the option.
const resolve = (agentSandbox: unknown) =>
  resolveKubernetesEngine({
    options: { agentSandbox } as Parameters<typeof resolveKubernetesEngine>[0]['options'],
    argument: 'engines[0]',
  }).kubernetes.agentSandbox;

describe('kubernetes.agentSandbox', () => {
  it('is off by default and with false, two warm sandboxes with true, or the size given', () => {
    expect(resolve(undefined)).toBeUndefined();
    expect(resolve(false)).toBeUndefined();
    expect(resolve(true)).toEqual({ warmPoolSize: 2 });
    expect(resolve({})).toEqual({ warmPoolSize: 2 });
    expect(resolve({ warmPoolSize: 0 })).toEqual({ warmPoolSize: 0 });
    expect(resolve({ warmPoolSize: 5 })).toEqual({ warmPoolSize: 5 });
  });

  it.each([0, 'yes', { warmPoolSize: -1 }, { warmPoolSize: 1.5 }, null])(
    'refuses %j, naming the option',
    value => {
      const error = (() => {
        try {
          return resolve(value);
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(InvalidArgumentError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ argument: 'engines[0].kubernetes.agentSandbox' });
    },
  );

  it('AI_TOOLBELT_KUBERNETES_AGENT_SANDBOX=1 turns it on; other values are refused', () => {
    const env = { AI_TOOLBELT_SANDBOX_ENGINE: 'kubernetes' };
    expect(kubernetesFromEnv(env)).toEqual({});
    expect(kubernetesFromEnv({ ...env, AI_TOOLBELT_KUBERNETES_AGENT_SANDBOX: '1' })).toEqual({
      agentSandbox: true,
    });
    expect(kubernetesFromEnv({ ...env, AI_TOOLBELT_KUBERNETES_AGENT_SANDBOX: '0' })).toEqual({});
    expect(() =>
      kubernetesFromEnv({ ...env, AI_TOOLBELT_KUBERNETES_AGENT_SANDBOX: 'true' }),
    ).toThrow(/AI_TOOLBELT_KUBERNETES_AGENT_SANDBOX/);
  });
});
