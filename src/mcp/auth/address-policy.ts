import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';
import {
  ADDRESS_RANGE_LABELS as LABELS,
  type IpAddress as Address,
  isMappedAddress as isMapped,
  unmappedAddress as unmapped,
} from '../../util/address-range.ts';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { McpBlockedAddressError } from '../../errors/mcp-blocked-address-error.ts';

type Lookup = (
  hostname: string,
  options: LookupOptions,
  callback: (
    error: NodeJS.ErrnoException | null,
    address: string | LookupAddress[],
    family?: number,
  ) => void,
) => void;

/**
 * Which addresses sign-in requests may reach: public unicast addresses, plus
 * the app's allow-list. Everything else (RFC 1918 private, CGNAT, loopback,
 * link-local incl. 169.254.169.254, IPv6 ULA and link-local, unspecified,
 * multicast, reserved, NAT64, 6to4 and Teredo) is refused, as is any scheme
 * but http(s). IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-compatible
 * (`::a.b.c.d`) addresses are judged as the IPv4 address they carry.
 * Classification is otherwise ipaddr.js's. `lookup` is
 * the same check at connect time, so a name that resolves differently the
 * second time (DNS rebinding) is still refused.
 *
 * @example
 * ```ts
 * const policy = new AddressPolicy({ server: 'github', allowed: ['10.0.0.0/8'] });
 * await policy.check(new URL('https://auth.example.com/token'));
 * ```
 */
export class AddressPolicy {
  private readonly server: string;
  private readonly allowed: readonly [Address, number][];

  constructor({
    server,
    allowed = [],
    argument = `servers.${server}.authAllowedAddresses`,
  }: {
    /** The server's name, for errors. */
    server: string;
    /** Addresses or CIDR ranges allowed although not public, e.g. `127.0.0.1` or `10.0.0.0/8`. */
    allowed?: readonly string[] | undefined;
    /** The option the allow-list came from, for errors. */
    argument?: string;
  }) {
    this.server = server;
    if (!Array.isArray(allowed)) {
      throw new InvalidArgumentError({
        argument,
        value: allowed,
        message: 'expected an array of IP addresses or CIDR ranges, e.g. ["10.0.0.0/8"].',
      });
    }
    this.allowed = allowed.map((entry, i) => {
      const text = typeof entry === 'string' ? entry.trim() : '';
      if (ipaddr.isValidCIDR(text)) {
        const [range, bits] = ipaddr.parseCIDR(text);
        return [unmapped(range), range.kind() === 'ipv6' && isMapped(range) ? bits - 96 : bits];
      }
      if (ipaddr.isValid(text)) {
        const address = unmapped(ipaddr.parse(text));
        return [address, address.kind() === 'ipv4' ? 32 : 128];
      }
      throw new InvalidArgumentError({
        argument: `${argument}[${i}]`,
        value: entry,
        message: 'expected an IP address or CIDR range, e.g. "127.0.0.1" or "10.0.0.0/8".',
      });
    });
  }

  /** Throws {@link McpBlockedAddressError} unless every address `url`'s host resolves to may be reached. */
  async check(url: URL): Promise<void> {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new McpBlockedAddressError({
        server: this.server,
        url: `${url.protocol}//${url.host}`,
        range: 'scheme',
        message:
          `Signing in to MCP server "${this.server}" would request a ${url.protocol} URL; ` +
          'only http and https are used.',
      });
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = ipaddr.isValid(host)
      ? [host]
      : (await resolve(host)).map(found => found.address);
    for (const address of addresses) this.assertAllowed(url, address);
  }

  /** A `dns.lookup` for sockets that refuses what `check` refuses. */
  readonly lookup: (url: URL) => Lookup = url => (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, []);
      try {
        for (const { address } of found) this.assertAllowed(url, address);
      } catch (refused) {
        return callback(refused as NodeJS.ErrnoException, []);
      }
      if (options.all) return callback(null, found);
      return callback(null, found[0]!.address, found[0]!.family);
    });
  };

  private assertAllowed(url: URL, text: string): void {
    const address = unmapped(ipaddr.parse(text));
    const range = address.range();
    if (range === 'unicast') return;
    if (
      this.allowed.some(
        ([base, bits]) => base.kind() === address.kind() && address.match(base, bits),
      )
    )
      return;
    const origin = url.origin;
    throw new McpBlockedAddressError({
      server: this.server,
      url: origin,
      address: address.toString(),
      range,
      message:
        `Signing in to MCP server "${this.server}" would reach ${origin} (${address.toString()}, ` +
        `${LABELS[range] ?? `a ${range}`} address): its OAuth metadata points at a non-public ` +
        'network, so nothing was sent. ' +
        `If that authorization server is yours, allow it with ` +
        `servers.${this.server}.authAllowedAddresses: ["${address.toString()}"].`,
    });
  }
}

function resolve(host: string): Promise<LookupAddress[]> {
  return new Promise((done, fail) =>
    dnsLookup(host, { all: true }, (error, found) => (error ? fail(error) : done(found))),
  );
}
