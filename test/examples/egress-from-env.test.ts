// What the examples' python sandbox may reach, from SANDBOX_EGRESS_ALLOW and SANDBOX_PYTHON_INDEX:
// both examples' functions, over the same table, and the sandbox's own check of the result.
import { describe, expect, it } from 'vitest';
import { egressFromEnv as honoEgress } from '../../examples/hono-server/src/egress-from-env.ts';
import { InvalidArgumentError } from '../../src/errors/invalid-argument-error.ts';
import { resolveEgressOptions } from '../../src/sandbox/egress/egress-options.ts';

type Env = Record<string, string | undefined>;
type EgressFromEnv = (env: Env) => ReturnType<typeof honoEgress>;
// Loaded by path: the Next app's files use extensionless imports (see next-routes.test.ts).
const { egressFromEnv: nextEgress } = (await import(
  new URL('../../examples/next-app/lib/egress-from-env.ts', import.meta.url).href
)) as { egressFromEnv: EgressFromEnv };

describe.each([
  ['hono-server', honoEgress as EgressFromEnv],
  ['next-app', nextEgress],
])('%s: egressFromEnv', (_name, egressFromEnv) => {
  it('is no network without either variable', () => {
    expect(egressFromEnv({})).toBeUndefined();
    expect(egressFromEnv({ SANDBOX_EGRESS_ALLOW: ' , ' })).toBeUndefined();
  });

  it('reads hosts, private: rules and the index', () => {
    const egress = egressFromEnv({
      SANDBOX_EGRESS_ALLOW: 'pypi.org, files.pythonhosted.org,private:devpi.internal:3141',
      SANDBOX_PYTHON_INDEX: 'http://devpi.internal:3141/root/pypi/+simple/',
    });
    expect(egress).toEqual({
      allow: [
        'pypi.org',
        'files.pythonhosted.org',
        { host: 'devpi.internal', ports: [3141], privateAddresses: true },
      ],
      pythonIndexUrl: 'http://devpi.internal:3141/root/pypi/+simple/',
    });
    expect(() => resolveEgressOptions(egress!)).not.toThrow();
  });

  it('leaves an index off the list for the sandbox to refuse, naming what to add', () => {
    const egress = egressFromEnv({ SANDBOX_PYTHON_INDEX: 'https://mirror.example/simple' })!;
    let error: unknown;
    try {
      resolveEgressOptions(egress);
    } catch (caught) {
      error = caught;
    }
    expect(InvalidArgumentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('add "mirror.example:443"');
  });
});
