import ipaddr from 'ipaddr.js';
import { ADDRESS_RANGE_LABELS, addressRange } from '../../util/address-range.ts';
import { withDeadline } from '../../util/with-deadline.ts';
import type { ResolvedEgress } from './egress-options.ts';
import { normaliseHost } from './egress-rules.ts';
import type { EgressRefusal } from '../types.ts';

/** Ranges a rule with `privateAddresses` may reach; anything else non-public never is. */
const PRIVATE_RANGES = new Set(['private', 'loopback', 'uniqueLocal', 'carrierGradeNat']);

/**
 * Whether a connection to `host:port` may be made, and where to: the host and port must match
 * a rule, the name is resolved here (never in the container), and every address it resolves to
 * must be public or, for a rule with `privateAddresses`, private. The connection then goes to
 * the returned address, the one that was checked (a second lookup could give another).
 *
 * @example
 * ```ts
 * const target = await checkTarget({ egress, host: 'pypi.org', port: 443 });
 * if ('reason' in target) refuse(target);
 * ```
 */
export async function checkTarget({
  egress,
  host,
  port,
  abortSignal,
}: {
  /** The policy. */
  egress: ResolvedEgress;
  /** The host as the code asked for it (a name or IP literal). */
  host: string;
  /** The port. */
  port: number;
  /** Stops waiting for the resolver (the proxy is closing). */
  abortSignal?: AbortSignal;
}): Promise<{ address: string } | EgressRefusal> {
  const name = normaliseHost(host);
  if (name === undefined || !Number.isInteger(port) || port < 1 || port > 65_535) {
    return { host, port, reason: 'bad-request', detail: 'not a host name or IP address and port' };
  }
  const rule = egress.rules.match(name, port);
  if (rule === undefined) {
    return { host: name, port, reason: 'not-allowed', detail: 'not on the egress allow-list' };
  }
  let addresses: readonly string[];
  if (ipaddr.isValid(name)) {
    addresses = [name];
  } else {
    try {
      addresses = await withDeadline({
        timeoutMs: egress.connectTimeoutMs,
        abortSignal,
        run: () => egress.resolve(name),
        timeoutError: () => new Error(`no answer within ${egress.connectTimeoutMs} ms`),
      });
    } catch (error) {
      const why = (error as { code?: string }).code ?? (error as Error).message;
      return {
        host: name,
        port,
        reason: 'unresolvable',
        detail: `the name did not resolve (${why})`,
      };
    }
  }
  if (!Array.isArray(addresses) || addresses.length === 0 || !addresses.every(ipaddr.isValid)) {
    return { host: name, port, reason: 'unresolvable', detail: 'the name resolved to no address' };
  }
  for (const text of addresses) {
    const { address, range } = addressRange(text);
    if (range === 'unicast' || (rule.privateAddresses && PRIVATE_RANGES.has(range))) continue;
    const label = ADDRESS_RANGE_LABELS[range] ?? `a ${range}`;
    const hint = PRIVATE_RANGES.has(range)
      ? ` (a rule { host: "${name}", privateAddresses: true } allows it)`
      : '';
    return {
      host: name,
      port,
      reason: 'private-address',
      detail: `${name === address.toString() ? 'it is' : `resolves to ${address.toString()},`} ${label} address${hint}`,
    };
  }
  return { address: addressRange(addresses[0]!).address.toString() };
}
