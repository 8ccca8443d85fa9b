/**
 * The client's address behind reverse proxies, and the key a rate limit counts it under. The TCP
 * peer is the client unless the host says which proxies it trusts: then the `X-Forwarded-For`
 * entries those proxies appended are believed, nearest first, up to the first hop that is not
 * trusted (the semantics of Express's `trust proxy` and of the `proxy-addr` package, which does
 * the walk). IPv6 clients are keyed by their network prefix (/64 by default): one subscriber line
 * gets 2^64 addresses, so a key per address would give each attacker as many buckets as it wants.
 * @see RFC 7239 §5.2 (the node list of forwarded requests); RFC 4291 §2.5.4, RFC 6177 (/64 per site)
 * @module
 */
import proxyaddr from 'proxy-addr';
import type { OAuthRequest } from '../core/http.js';
import { parseIPAddress, parseIPv4 } from './ip-address.js';

/**
 * Which proxies in front of the server may report the client's address in `X-Forwarded-For`:
 * - `0` (or `''`, or an empty list): none. The TCP peer is the client. The default: a header any
 *   client can write proves nothing.
 * - a number `n` (or its decimal text, `'1'`): the `n` hops nearest the server are proxies; with one
 *   reverse proxy in front, `1`.
 * - addresses and CIDR ranges, as an array or comma-separated (`'10.0.0.0/8, 192.0.2.7'`), and the
 *   names `loopback`, `linklocal`, `uniquelocal`: hops with these addresses are proxies.
 *
 * @example
 * ```ts
 * import type { TrustProxy } from 'portcullis';
 *
 * const oneProxy: TrustProxy = 1;
 * const ourProxies: TrustProxy = ['loopback', '10.0.0.0/8'];
 * ```
 * @see RFC 7239 §5.2
 * @group Rate Limiting
 */
export type TrustProxy = number | string | readonly string[];

/**
 * Options of {@link createClientAddressResolver}.
 *
 * @example
 * ```ts
 * import type { ClientAddressOptions } from 'portcullis';
 *
 * const options: ClientAddressOptions = { trustProxy: process.env.TRUST_PROXY ?? 0, ipv6PrefixLength: 64 };
 * ```
 * @see RFC 6177 (IPv6 address assignment to end sites)
 * @group Rate Limiting
 */
export interface ClientAddressOptions {
  /** The proxies whose `X-Forwarded-For` entries are believed. Default `0`: none. */
  readonly trustProxy?: TrustProxy;
  /** Bits of an IPv6 address that make its key, 1 to 128. Default 64. */
  readonly ipv6PrefixLength?: number;
}

/**
 * Resolves client addresses with one trust setting, compiled once.
 *
 * @example
 * ```ts
 * import { createClientAddressResolver } from 'portcullis';
 *
 * const clients = createClientAddressResolver({ trustProxy: 1 });
 * clients.address('10.0.0.2', '198.51.100.4'); // '198.51.100.4'
 * clients.key('10.0.0.2', '2001:db8:1:2:3:4:5:6'); // '2001:db8:1:2::/64'
 * ```
 * @see RFC 7239 §5.2 (the node list of forwarded requests); RFC 6177 (/64 per site)
 * @group Rate Limiting
 */
export interface ClientAddressResolver {
  /**
   * The client's address: the TCP peer, or what the trusted proxies reported. IPv4-mapped IPv6
   * (`::ffff:192.0.2.1`) is given as IPv4. An entry that is not an IP address (`unknown`, a port,
   * garbage) is never the answer: the hop that reported it is.
   *
   * @param peer - the TCP peer's address (`socket.remoteAddress`); `undefined` when unknown
   * @param forwardedFor - the `X-Forwarded-For` header, several headers joined with `", "`
   * @returns the address, or `undefined` when the peer is unknown
   */
  address(peer: string | undefined, forwardedFor?: string | null): string | undefined;
  /**
   * The rate-limit key of a client: {@link ClientAddressResolver.address}, cut to the IPv6 prefix.
   *
   * @param peer - the TCP peer's address
   * @param forwardedFor - the `X-Forwarded-For` header
   * @returns the key (see {@link clientAddressKey}), or `undefined` when the peer is unknown
   */
  key(peer: string | undefined, forwardedFor?: string | null): string | undefined;
  /**
   * The server's `clientIp` option: the key of an {@link OAuthRequest}, from its `remoteAddress`
   * and `x-forwarded-for` header.
   */
  readonly clientIp: (request: OAuthRequest) => string | undefined;
}

const DEFAULT_IPV6_PREFIX = 64;

/** `proxy-addr` reads these two fields of a request; nothing else is needed to use it. */
interface ForwardedRequest {
  readonly headers: { readonly 'x-forwarded-for'?: string };
  readonly socket: { readonly remoteAddress: string };
}

type TrustFunction = (address: string, hop: number) => boolean;

function compileTrust(trust: TrustProxy): TrustFunction | undefined {
  if (typeof trust === 'number') {
    if (!Number.isSafeInteger(trust) || trust < 0) {
      throw new TypeError(`trustProxy: a hop count must be a whole number >= 0, not ${trust}`);
    }
    return trust === 0 ? undefined : (_address, hop) => hop < trust;
  }
  if (typeof trust === 'string') {
    const text = trust.trim();
    if (/^[0-9]+$/.test(text)) return compileTrust(Number(text));
    return compileTrust(text.split(','));
  }
  const entries = trust.map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.length === 0) return undefined;
  try {
    return proxyaddr.compile(entries);
  } catch (error) {
    throw new TypeError(`trustProxy: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Bytes of an address text, without brackets or a zone (`fe80::1%eth0`); IPv4-mapped IPv6 as IPv4. */
function addressBytes(text: string): Uint8Array | undefined {
  const zone = text.indexOf('%');
  const bytes = parseIPAddress((zone === -1 ? text : text.slice(0, zone)).toLowerCase());
  if (bytes === undefined || bytes.length === 4) return bytes;
  const mapped = bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

/** RFC 5952 text of 16 bytes: lower case, no leading zeros, the longest run of zero groups as `::`. */
function formatIPv6(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  let best = { start: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { start: i, length: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.start === -1) return hex.join(':');
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.length).join(':')}`;
}

function formatAddress(bytes: Uint8Array): string {
  return bytes.length === 4 ? `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}` : formatIPv6(bytes);
}

/**
 * The rate-limit key of an address: an IPv4 address as it is, an IPv6 address as its network
 * prefix (`2001:db8:1:2::/64`), so that one site cannot multiply its buckets by changing the low
 * bits. IPv4-mapped IPv6 (`::ffff:192.0.2.1`) is keyed as the IPv4 address. Text that is not an
 * address is returned unchanged, so a limit still applies to it.
 *
 * @param address - an IPv4 or IPv6 address (brackets and a zone are ignored)
 * @param ipv6PrefixLength - bits of an IPv6 address that make the key, 1 to 128 (default 64)
 * @returns the key, or `undefined` when `address` is
 * @throws TypeError when `ipv6PrefixLength` is out of range
 * @see RFC 4291 §2.5.4, RFC 6177
 * @example
 * ```ts
 * import { clientAddressKey } from 'portcullis';
 *
 * clientAddressKey('203.0.113.9'); // '203.0.113.9'
 * clientAddressKey('2001:db8:0:1:aaaa::1'); // '2001:db8:0:1::/64'
 * clientAddressKey('::ffff:203.0.113.9'); // '203.0.113.9'
 * ```
 * @group Rate Limiting
 */
export function clientAddressKey(
  address: string | undefined,
  ipv6PrefixLength = DEFAULT_IPV6_PREFIX,
): string | undefined {
  checkPrefixLength(ipv6PrefixLength);
  if (address === undefined) return undefined;
  // Canonical IPv4 text (what a resolver returns) is its own key.
  if (parseIPv4(address) !== undefined) return address;
  const bytes = addressBytes(address);
  if (bytes === undefined) return address;
  if (bytes.length === 4) return formatAddress(bytes);
  if (ipv6PrefixLength === 128) return formatIPv6(bytes);
  const masked = new Uint8Array(16);
  const full = Math.floor(ipv6PrefixLength / 8);
  masked.set(bytes.subarray(0, full));
  const rest = ipv6PrefixLength % 8;
  if (rest !== 0) masked[full] = bytes[full]! & ((0xff << (8 - rest)) & 0xff);
  return `${formatIPv6(masked)}/${ipv6PrefixLength}`;
}

function checkPrefixLength(bits: number): void {
  if (!Number.isInteger(bits) || bits < 1 || bits > 128) {
    throw new TypeError(`ipv6PrefixLength must be a whole number from 1 to 128, not ${bits}`);
  }
}

/**
 * Creates a resolver of client addresses for one trust setting. Use its `clientIp` as the server's
 * `clientIp` option, and its `key` for the host's own limits (a login form), so that every limit
 * counts the same client.
 *
 * @param options - which proxies to trust (default none) and the IPv6 prefix of keys (default 64)
 * @returns the resolver
 * @throws TypeError when `trustProxy` names something that is not an address, a range or a known
 *   name, or a hop count is negative, or `ipv6PrefixLength` is out of range
 * @see RFC 7239 §5.2; RFC 6749 §10.10 (limits need the real client address)
 * @example
 * ```ts
 * import { createAuthorizationServer, createClientAddressResolver, memoryStorage } from 'portcullis';
 * import { createMemoryRateLimiter } from 'portcullis/rate-limit';
 *
 * // Behind one reverse proxy (nginx, a load balancer) that appends to X-Forwarded-For:
 * const clients = createClientAddressResolver({ trustProxy: 1 });
 * const server = await createAuthorizationServer({
 *   issuer: 'https://auth.example.com',
 *   storage: memoryStorage(),
 *   rateLimiter: createMemoryRateLimiter(),
 *   clientIp: clients.clientIp,
 * });
 * ```
 * @group Rate Limiting
 */
export function createClientAddressResolver(options: ClientAddressOptions = {}): ClientAddressResolver {
  const trust = compileTrust(options.trustProxy ?? 0);
  const prefix = options.ipv6PrefixLength ?? DEFAULT_IPV6_PREFIX;
  checkPrefixLength(prefix);

  const normalise = (text: string): string | undefined => {
    // Canonical IPv4 text (the usual peer address) is already its normal form.
    if (parseIPv4(text) !== undefined) return text;
    const bytes = addressBytes(text);
    return bytes === undefined ? undefined : formatAddress(bytes);
  };

  function address(peer: string | undefined, forwardedFor?: string | null): string | undefined {
    if (peer === undefined || peer === '') return undefined;
    if (trust === undefined || forwardedFor === undefined || forwardedFor === null || forwardedFor === '') {
      return normalise(peer) ?? peer;
    }
    const request: ForwardedRequest = {
      headers: { 'x-forwarded-for': forwardedFor },
      socket: { remoteAddress: peer },
    };
    // From the peer outwards, every hop up to and including the first untrusted one.
    const hops = proxyaddr.all(request as never, trust);
    for (let i = hops.length - 1; i > 0; i--) {
      const hop = normalise(hops[i]!);
      if (hop !== undefined) return hop;
    }
    return normalise(peer) ?? peer;
  }

  function key(peer: string | undefined, forwardedFor?: string | null): string | undefined {
    return clientAddressKey(address(peer, forwardedFor), prefix);
  }

  return {
    address,
    key,
    clientIp: (request) => key(request.remoteAddress, request.headers['x-forwarded-for']),
  };
}
