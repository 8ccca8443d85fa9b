/**
 * Strict parsing of IP address text into bytes, for address checks that must not depend on a
 * platform parser's leniency. Only the canonical textual forms are accepted: dotted-decimal IPv4
 * without leading zeros, and RFC 4291 §2.2 IPv6 text (with `::` and a trailing dotted quad) without
 * a zone identifier.
 * @see RFC 4291 §2.2, RFC 3986 §3.2.2
 * @module
 */

const ZERO = 0x30;
const NINE = 0x39;
const DOT = 0x2e;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

/**
 * Parses dotted-decimal IPv4 (`192.0.2.1`) into 4 bytes; `undefined` for anything else, including
 * the legacy forms `2130706433`, `0x7f.1`, `017.0.0.1` and `127.1`.
 *
 * @param text - the address text
 * @returns the 4 address bytes, or `undefined`
 * @example
 * ```ts
 * parseIPv4('10.0.0.1'); // Uint8Array [10, 0, 0, 1]
 * parseIPv4('0x7f.1'); // undefined
 * ```
 */
export function parseIPv4(text: string): Uint8Array | undefined {
  // One pass over the characters (every request's address goes through here): four groups of one
  // to three digits separated by dots, no leading zero, each at most 255.
  if (text.length < 7 || text.length > 15) return undefined;
  const bytes = new Uint8Array(4);
  let part = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i === text.length ? DOT : text.charCodeAt(i);
    if (c >= ZERO && c <= NINE) {
      if (digits === 1 && value === 0) return undefined;
      value = value * 10 + (c - ZERO);
      digits++;
      if (value > 255) return undefined;
    } else if (c === DOT && digits > 0 && part < 4) {
      bytes[part++] = value;
      value = 0;
      digits = 0;
    } else {
      return undefined;
    }
  }
  return part === 4 ? bytes : undefined;
}

/**
 * Parses IPv6 text (`2001:db8::1`, `::ffff:10.0.0.1`) into 16 bytes; `undefined` when malformed or
 * when it carries a zone identifier (`fe80::1%eth0`).
 *
 * @param text - the address text, without brackets
 * @returns the 16 address bytes, or `undefined`
 * @see RFC 4291 §2.2
 * @example
 * ```ts
 * parseIPv6('::1'); // 15 zero bytes, then 1
 * parseIPv6('fe80::1%25eth0'); // undefined
 * ```
 */
export function parseIPv6(text: string): Uint8Array | undefined {
  if (text.length === 0 || text.length > 45) return undefined;
  let head = text;
  let v4: Uint8Array | undefined;
  const lastColon = text.lastIndexOf(':');
  if (lastColon !== -1 && text.indexOf('.', lastColon) !== -1) {
    v4 = parseIPv4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    // Keep the colon so that `::1.2.3.4` leaves `::` and `a::1.2.3.4` leaves `a::`.
    head = text.slice(0, lastColon + 1);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const groupsWanted = v4 === undefined ? 8 : 6;
  const double = head.indexOf('::');
  if (double !== -1 && head.indexOf('::', double + 1) !== -1) return undefined;

  const parseGroups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    for (const group of part.split(':')) {
      if (!HEX_GROUP.test(group)) return undefined;
      out.push(Number.parseInt(group, 16));
    }
    return out;
  };

  let groups: number[];
  if (double === -1) {
    const all = parseGroups(head);
    if (all === undefined || all.length !== groupsWanted) return undefined;
    groups = all;
  } else {
    const left = parseGroups(head.slice(0, double));
    const right = parseGroups(head.slice(double + 2));
    if (left === undefined || right === undefined) return undefined;
    const missing = groupsWanted - left.length - right.length;
    // `::` stands for at least one group of zeros (RFC 4291 §2.2, RFC 5952 §4.2.2 allows exactly one).
    if (missing < 1) return undefined;
    groups = [...left, ...new Array<number>(missing).fill(0), ...right];
  }

  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  if (v4 !== undefined) bytes.set(v4, 12);
  return bytes;
}

/**
 * Parses either family: dotted-decimal IPv4 or IPv6 text (brackets allowed around IPv6).
 *
 * @param text - the address text
 * @returns 4 or 16 bytes, or `undefined` when `text` is not an address in a canonical form
 * @example
 * ```ts
 * parseIPAddress('[::1]')?.length; // 16
 * ```
 */
export function parseIPAddress(text: string): Uint8Array | undefined {
  if (text.startsWith('[') && text.endsWith(']')) return parseIPv6(text.slice(1, -1));
  return text.includes(':') ? parseIPv6(text) : parseIPv4(text);
}

/** An address range: a prefix of `bits` bits of `bytes` (4 or 16 bytes). */
export interface AddressRange {
  readonly bytes: Uint8Array;
  readonly bits: number;
}

/**
 * Parses CIDR notation (`10.0.0.0/8`, `fc00::/7`) or a single address (a /32 or /128).
 *
 * @param text - the range
 * @returns the range, or `undefined` when malformed
 * @example
 * ```ts
 * parseAddressRange('169.254.0.0/16'); // { bytes: [169, 254, 0, 0], bits: 16 }
 * ```
 */
export function parseAddressRange(text: string): AddressRange | undefined {
  const slash = text.indexOf('/');
  const bytes = parseIPAddress(slash === -1 ? text : text.slice(0, slash));
  if (bytes === undefined) return undefined;
  const max = bytes.length * 8;
  if (slash === -1) return { bytes, bits: max };
  const bitsText = text.slice(slash + 1);
  if (!/^(?:0|[1-9][0-9]{0,2})$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  return bits > max ? undefined : { bytes, bits };
}

/**
 * True when `address` lies in `range` (same family, first `range.bits` bits equal).
 *
 * @param address - 4 or 16 address bytes
 * @param range - the range
 * @returns whether the address is inside the range
 * @example
 * ```ts
 * inRange(parseIPv4('10.1.2.3')!, parseAddressRange('10.0.0.0/8')!); // true
 * ```
 */
export function inRange(address: Uint8Array, range: AddressRange): boolean {
  if (address.length !== range.bytes.length) return false;
  const full = Math.floor(range.bits / 8);
  for (let i = 0; i < full; i++) if (address[i] !== range.bytes[i]) return false;
  const rest = range.bits % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((address[full]! ^ range.bytes[full]!) & mask) === 0;
}
