import ipaddr from 'ipaddr.js';

/** An IPv4 or IPv6 address as ipaddr.js parses it. */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * The range of an IP address in ipaddr.js's terms (`unicast` for public addresses; `loopback`,
 * `private`, `linkLocal`, `uniqueLocal`, `carrierGradeNat`, `unspecified`, `multicast`,
 * `broadcast`, `reserved`, ... otherwise), judging IPv4-mapped (`::ffff:a.b.c.d`) and
 * IPv4-compatible (`::a.b.c.d`) addresses as the IPv4 address they carry, since a stack that
 * maps or tunnels them reaches that address. Shared by the sign-in SSRF guard and the sandbox's
 * egress proxy, so both refuse the same things.
 *
 * @example
 * ```ts
 * addressRange('::ffff:127.0.0.1'); // { address: IPv4 127.0.0.1, range: 'loopback' }
 * ```
 */
export function addressRange(text: string): { address: IpAddress; range: string } {
  const address = unmappedAddress(ipaddr.parse(text));
  return { address, range: address.range() };
}

// IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d, the deprecated ::/96 other
// than :: and ::1, which ipaddr.js calls unicast): both carry an IPv4 address in their last
// 32 bits.
/** True for an IPv6 address that carries an IPv4 address (mapped or compatible). */
export function isMappedAddress(address: IpAddress): boolean {
  if (address.kind() !== 'ipv6') return false;
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return true;
  const [a, b, c, d, e, f, g, h] = v6.parts;
  return a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0 && (g !== 0 || h! > 1);
}

/** The IPv4 address an IPv4-mapped or -compatible IPv6 address carries; others unchanged. */
export function unmappedAddress(address: IpAddress): IpAddress {
  if (!isMappedAddress(address)) return address;
  const parts = (address as ipaddr.IPv6).parts;
  return new ipaddr.IPv4([parts[6]! >> 8, parts[6]! & 255, parts[7]! >> 8, parts[7]! & 255]);
}

/** How each non-public range reads in a sentence ("a loopback address"). */
export const ADDRESS_RANGE_LABELS: Readonly<Record<string, string>> = {
  loopback: 'a loopback',
  private: 'a private',
  linkLocal: 'a link-local',
  carrierGradeNat: 'a carrier-grade NAT',
  uniqueLocal: 'a unique local',
  unspecified: 'an unspecified',
  multicast: 'a multicast',
  broadcast: 'a broadcast',
  reserved: 'a reserved',
};
