import type { EgressOptions } from 'ai-toolbelt/sandbox';

/**
 * What the python sandbox may reach, from the environment (default: nothing, no network):
 * `SANDBOX_EGRESS_ALLOW`, comma-separated hosts (`pypi.org`, `files.pythonhosted.org`,
 * `*.example.com`, `host:port`; a `private:` prefix lets that name resolve to an address on your
 * own network, e.g. `private:devpi.internal:3141`), and `SANDBOX_PYTHON_INDEX`, the package index
 * `%pip install` uses (its host must be in the list). The sandbox checks both when it opens.
 *
 * @example
 * ```ts
 * const egress = egressFromEnv({ SANDBOX_EGRESS_ALLOW: 'pypi.org,files.pythonhosted.org' });
 * ```
 */
export function egressFromEnv(env: Record<string, string | undefined>): EgressOptions | undefined {
  const allow = (env.SANDBOX_EGRESS_ALLOW ?? '')
    .split(',')
    .map(entry => entry.trim())
    .filter(entry => entry !== '')
    .map(entry => {
      if (!entry.startsWith('private:')) return entry;
      const [host = '', port] = entry.slice('private:'.length).split(':');
      return { host, ports: [port === undefined ? 443 : Number(port)], privateAddresses: true };
    });
  const index = env.SANDBOX_PYTHON_INDEX?.trim();
  if (allow.length === 0 && !index) return undefined;
  return { allow, ...(index ? { pythonIndexUrl: index } : {}) };
}
