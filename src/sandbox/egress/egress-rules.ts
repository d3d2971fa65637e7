import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';

/**
 * One entry of `egress.allow` as an object.
 *
 * @example
 * ```ts
 * const rule: EgressRule = { host: 'devpi.internal', ports: [3141], privateAddresses: true };
 * ```
 */
export type EgressRule = {
  /** `name` (that name only), `*.suffix` (names under it, not itself), an IP literal, or `*`. */
  host: string;
  /** Ports that may be reached on it (default `[443]`). */
  ports?: readonly number[];
  /**
   * Let the name resolve to private, loopback, unique-local or carrier-grade-NAT addresses (an
   * index on your own network). Link-local (cloud metadata), multicast, unspecified and reserved
   * addresses are never reached.
   */
  privateAddresses?: boolean;
};

/** A rule, checked and normalised. */
export type CompiledRule = {
  /** The rule as written, for notes. */
  text: string;
  kind: 'exact' | 'suffix' | 'any';
  /** The name (exact), the suffix without `*.`, or '' for `*`. */
  host: string;
  ports: ReadonlySet<number>;
  privateAddresses: boolean;
};

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The lower-case ASCII form of a host name (IDN to punycode, no trailing dot), or the
 * normalised text of an IP literal (brackets removed); undefined when it is neither.
 */
export function normaliseHost(host: string): string | undefined {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (ipaddr.isValid(bare)) {
    // ipaddr.isValid accepts shorthand IPv4 ("127.1"), which resolvers treat as 127.0.0.1.
    return ipaddr.parse(bare).toString();
  }
  const ascii = domainToASCII(host.replace(/\.$/, '').toLowerCase());
  if (ascii === '' || ascii.length > 253) return undefined;
  return ascii.split('.').every(label => LABEL.test(label)) ? ascii : undefined;
}

/**
 * The allow-list: which host and port a connection may go to, and whether the name may resolve
 * to a private address.
 *
 * @example
 * ```ts
 * const rules = EgressRules.parse(['pypi.org', '*.pythonhosted.org', 'devpi.internal:3141']);
 * rules.match('files.pythonhosted.org', 443); // the '*.pythonhosted.org' rule
 * ```
 */
export class EgressRules {
  readonly rules: readonly CompiledRule[];

  private constructor(rules: readonly CompiledRule[]) {
    this.rules = rules;
  }

  /** Checks every entry (`InvalidArgumentError` naming `egress.allow[i]`). */
  static parse(allow: unknown): EgressRules {
    if (!Array.isArray(allow)) {
      throw new InvalidArgumentError({
        argument: 'egress.allow',
        value: allow,
        message: 'expected an array of hosts, e.g. ["pypi.org", "files.pythonhosted.org"]',
      });
    }
    return new EgressRules(allow.map((entry: unknown, i) => compile(entry, `egress.allow[${i}]`)));
  }

  /** The first rule that lets a connection go to `host` (a name or IP literal) on `port`. */
  match(host: string, port: number): CompiledRule | undefined {
    const name = normaliseHost(host);
    if (name === undefined) return undefined;
    const literal = ipaddr.isValid(name);
    return this.rules.find(
      rule =>
        rule.ports.has(port) &&
        (rule.kind === 'any' ||
          (rule.kind === 'exact' && rule.host === name) ||
          (rule.kind === 'suffix' && !literal && name.endsWith(`.${rule.host}`))),
    );
  }
}

function compile(entry: unknown, argument: string): CompiledRule {
  const fail = (message: string): never => {
    throw new InvalidArgumentError({ argument, value: entry, message });
  };
  let host: unknown;
  let ports: unknown;
  let privateAddresses: unknown = false;
  if (typeof entry === 'string') {
    const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry.trim());
    if (match === null) {
      return fail('expected "host", "host:port", "*.suffix", "*.suffix:port" or "*"');
    }
    host = match[1];
    ports = match[2] === undefined ? undefined : [Number(match[2])];
  } else if (entry !== null && typeof entry === 'object') {
    ({ host, ports, privateAddresses = false } = entry as Record<string, unknown>);
  } else {
    return fail('expected a string such as "pypi.org:443" or { host, ports?, privateAddresses? }');
  }
  if (typeof host !== 'string') return fail('`host` must be a string');
  if (typeof privateAddresses !== 'boolean') return fail('`privateAddresses` must be a boolean');
  const portList = ports === undefined ? [443] : ports;
  if (
    !Array.isArray(portList) ||
    portList.length === 0 ||
    !portList.every(port => Number.isInteger(port) && port >= 1 && port <= 65_535)
  ) {
    return fail('ports must be a non-empty list of integers from 1 to 65535');
  }
  const text = typeof entry === 'string' ? entry : `${host}:${portList.join(',')}`;
  const base = { text, ports: new Set(portList as number[]), privateAddresses };
  if (host === '*') return { ...base, kind: 'any', host: '' };
  const suffix = host.startsWith('*.');
  const name = normaliseHost(suffix ? host.slice(2) : host);
  if (name === undefined || (suffix && ipaddr.isValid(name))) {
    return fail(`"${host}" is not a host name, "*.suffix" or IP address`);
  }
  if (suffix && !name.includes('.')) {
    // "*.com" would let the code reach every .com host.
    return fail(
      `"${host}" is too broad: the suffix needs at least two labels, e.g. "*.example.com"`,
    );
  }
  return { ...base, kind: suffix ? 'suffix' : 'exact', host: name };
}
