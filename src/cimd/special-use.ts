/**
 * Which IP addresses a metadata document may be fetched from. Client ID Metadata Documents make
 * the server fetch URLs chosen by anyone, so every address a host resolves to is checked before a
 * connection is opened (draft-ietf-oauth-client-id-metadata-document-01 §6.5).
 *
 * IPv6 is an allowlist: only global unicast (2000::/3) passes, minus the special blocks inside it;
 * NAT64 (64:ff9b::/96) passes when the IPv4 address it wraps does. IPv4 is the complement of the
 * IANA IPv4 Special-Purpose Address Registry (RFC 6890 and its updates), since the rest of IPv4
 * is global.
 * @see RFC 6890; RFC 4291 §2.4; RFC 6052 §2.1; RFC 8215
 * @module
 */
import { type AddressRange, inRange, parseAddressRange, parseIPAddress } from '../protocol/ip-address.js';

type NamedRange = readonly [range: AddressRange, name: string];

function ranges(list: readonly (readonly [string, string])[]): readonly NamedRange[] {
  return list.map(([cidr, name]) => [parseAddressRange(cidr)!, name] as const);
}

const IPV4_SPECIAL = ranges([
  ['0.0.0.0/8', '"this network" (0.0.0.0/8)'],
  ['10.0.0.0/8', 'private-use (10.0.0.0/8)'],
  ['100.64.0.0/10', 'shared address space / CGNAT (100.64.0.0/10)'],
  ['127.0.0.0/8', 'loopback (127.0.0.0/8)'],
  ['169.254.0.0/16', 'link-local, cloud metadata (169.254.0.0/16)'],
  ['172.16.0.0/12', 'private-use (172.16.0.0/12)'],
  ['192.0.0.0/24', 'IETF protocol assignments (192.0.0.0/24)'],
  ['192.0.2.0/24', 'documentation (192.0.2.0/24)'],
  ['192.31.196.0/24', 'AS112 (192.31.196.0/24)'],
  ['192.52.193.0/24', 'AMT (192.52.193.0/24)'],
  ['192.88.99.0/24', '6to4 relay anycast (192.88.99.0/24)'],
  ['192.168.0.0/16', 'private-use (192.168.0.0/16)'],
  ['192.175.48.0/24', 'AS112 direct delegation (192.175.48.0/24)'],
  ['198.18.0.0/15', 'benchmarking (198.18.0.0/15)'],
  ['198.51.100.0/24', 'documentation (198.51.100.0/24)'],
  ['203.0.113.0/24', 'documentation (203.0.113.0/24)'],
  ['224.0.0.0/4', 'multicast (224.0.0.0/4)'],
  ['255.255.255.255/32', 'limited broadcast (255.255.255.255)'],
  ['240.0.0.0/4', 'reserved (240.0.0.0/4)'],
]);

const NAT64 = parseAddressRange('64:ff9b::/96')!;
const GLOBAL_UNICAST = parseAddressRange('2000::/3')!;

/** Blocks outside 2000::/3, named for the error message; anything else outside it is "not global unicast". */
const IPV6_OUTSIDE_GLOBAL = ranges([
  ['::/128', 'unspecified (::)'],
  ['::1/128', 'loopback (::1)'],
  ['::ffff:0:0/96', 'IPv4-mapped (::ffff:0:0/96)'],
  ['::/96', 'IPv4-compatible (::/96)'],
  ['64:ff9b:1::/48', 'local-use NAT64 (64:ff9b:1::/48)'],
  ['100::/64', 'discard-only (100::/64)'],
  ['fc00::/7', 'unique-local (fc00::/7)'],
  ['fe80::/10', 'link-local (fe80::/10)'],
  ['fec0::/10', 'site-local (fec0::/10)'],
  ['ff00::/8', 'multicast (ff00::/8)'],
]);

/** Special blocks inside 2000::/3. */
const IPV6_INSIDE_GLOBAL = ranges([
  ['2001:db8::/32', 'documentation (2001:db8::/32)'],
  ['2001::/23', 'IETF protocol assignments, Teredo (2001::/23)'],
  ['2002::/16', '6to4 (2002::/16)'],
  ['3fff::/20', 'documentation (3fff::/20)'],
]);

function named(address: Uint8Array, list: readonly NamedRange[]): string | undefined {
  for (const [range, name] of list) if (inRange(address, range)) return name;
  return undefined;
}

/**
 * Names the special-use block `address` belongs to, or `undefined` when it is a global address a
 * metadata document may be fetched from.
 *
 * @param address - 4 or 16 address bytes (see `parseIPAddress`)
 * @returns a description such as `loopback (127.0.0.0/8)`, or `undefined` for a global address
 * @see RFC 6890; RFC 6052 §2.1 (NAT64 well-known prefix)
 * @example
 * ```ts
 * specialUseBlock(parseIPAddress('169.254.169.254')!); // 'link-local, cloud metadata (169.254.0.0/16)'
 * specialUseBlock(parseIPAddress('64:ff9b::808:808')!); // undefined (NAT64 of 8.8.8.8)
 * ```
 */
export function specialUseBlock(address: Uint8Array): string | undefined {
  if (address.length === 4) return named(address, IPV4_SPECIAL);
  if (inRange(address, NAT64)) {
    const inner = named(address.subarray(12), IPV4_SPECIAL);
    return inner === undefined ? undefined : `NAT64 of ${inner}`;
  }
  if (!inRange(address, GLOBAL_UNICAST)) {
    return named(address, IPV6_OUTSIDE_GLOBAL) ?? 'not global unicast (outside 2000::/3)';
  }
  return named(address, IPV6_INSIDE_GLOBAL);
}

/**
 * Decides whether the server may connect to an address: refused when it is not an address at all,
 * or when it is special-use and not inside one of the host's `allowed` ranges.
 *
 * @param address - the address text, as a resolver returns it
 * @param allowed - ranges the host exempts (tests, an intranet client host)
 * @returns why the address is refused, or `undefined` when it may be used
 * @see draft-ietf-oauth-client-id-metadata-document-01 §6.5
 * @example
 * ```ts
 * addressRefusal('10.0.0.1', []); // 'private-use (10.0.0.0/8)'
 * addressRefusal('127.0.0.1', [parseAddressRange('127.0.0.1')!]); // undefined
 * ```
 */
export function addressRefusal(address: string, allowed: readonly AddressRange[]): string | undefined {
  const bytes = parseIPAddress(address);
  if (bytes === undefined) return 'not an IP address';
  const block = specialUseBlock(bytes);
  if (block === undefined) return undefined;
  return allowed.some((range) => inRange(bytes, range)) ? undefined : block;
}
