/**
 * Raw-string URL grammar shared by redirect URIs, client metadata URLs and Client ID Metadata
 * Document URLs. Nothing here calls `new URL()`: WHATWG parsing folds `２１３０７０６４３３`,
 * `0x7f.1` and `127.1` into `127.0.0.1`, strips TAB and LF, and resolves `..`, so a check on its
 * output approves strings that other parsers read differently (RFC 9700 §4.1.3).
 *
 * The accepted https URL is: `https://` + host + optional port + optional path + optional query,
 * printable ASCII only, where
 * - host is a DNS name of letter-digit-hyphen labels (no empty label, no trailing dot), a canonical
 *   dotted-decimal IPv4 address, or a bracketed IPv6 address without zone;
 * - a name whose last label is numeric (`2130706433`, `0x7f.1`, `127.1`) is refused, because URL
 *   parsers read it as an IPv4 address in one of its legacy forms;
 * - port is 1-65535 without leading zero;
 * - path and query use RFC 3986 characters with valid percent-encoding, and the path has no `.` or
 *   `..` segment, percent-encoded or not;
 * - there is no user info and no fragment.
 *
 * @see RFC 3986 §3 (syntax), §6.2.1 (simple string comparison)
 * @module
 */
import { parseIPv6 } from './ip-address.js';

// pchar = unreserved / pct-encoded / sub-delims / ":" / "@" (RFC 3986 §3.3); query adds "/" and "?".
const PATH = /^(?:\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*)*$/;
const QUERY = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
// What WHATWG treats as an IPv4 part: decimal, or 0x-hex (octal is decimal digits with a leading 0).
const NUMERIC_LABEL = /^(?:0[xX][0-9A-Fa-f]*|[0-9]+)$/;
const DOTTED_QUAD =
  /^(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}$/;
const PORT = /^[1-9][0-9]{0,4}$/;

/** Longest URL accepted by {@link parseHttpsUrl}. */
export const MAX_URL_LENGTH = 2000;

/** The parts of an https URL accepted by {@link parseHttpsUrl}, as raw substrings. */
export interface HttpsUrlParts {
  /** The host as written: a DNS name, a dotted-quad IPv4 address, or an IPv6 address without brackets. */
  readonly host: string;
  readonly hostKind: 'name' | 'ipv4' | 'ipv6';
  /** The explicit port, or `undefined` when the URL has none. */
  readonly port: number | undefined;
  /** The path as written (`''` when absent). */
  readonly path: string;
  /** The query without `?`, or `undefined` when absent. */
  readonly query: string | undefined;
}

/** Outcome of {@link parseHttpsUrl}: the parts, or why the string is refused. */
export type HttpsUrlResult =
  | { readonly ok: true; readonly url: HttpsUrlParts }
  | { readonly ok: false; readonly problem: string };

/** True when a path has a `.` or `..` segment, literally or percent-encoded (`%2e`, `.%2E`, ...). */
export function hasDotSegment(path: string): boolean {
  // A dot segment needs a `.`, literal or as `%2e`.
  if (!path.includes('.') && !path.includes('%')) return false;
  for (const segment of path.split('/')) {
    const s = segment.toLowerCase();
    if (s === '.' || s === '..' || s === '%2e' || s === '%2e%2e' || s === '.%2e' || s === '%2e.') return true;
  }
  return false;
}

/** True when `path` is `''` or `/`-separated segments of RFC 3986 path characters. */
export function isPathText(path: string): boolean {
  return PATH.test(path);
}

/** True when `query` (without `?`) uses only RFC 3986 query characters. */
export function isQueryText(query: string): boolean {
  return QUERY.test(query);
}

function refuse(problem: string): HttpsUrlResult {
  return { ok: false, problem };
}

function checkName(host: string): string | undefined {
  if (host.length > 253) return 'the host name is too long';
  const labels = host.split('.');
  const last = labels[labels.length - 1]!;
  if (NUMERIC_LABEL.test(last)) {
    return DOTTED_QUAD.test(host)
      ? undefined
      : 'numeric host forms other than dotted-decimal IPv4 (such as 2130706433 or 0x7f.1) are refused';
  }
  for (const label of labels) {
    if (!LABEL.test(label)) return 'the host must be a DNS name of letters, digits and hyphens';
  }
  return undefined;
}

/**
 * Parses an absolute https URL by the raw-string grammar of this module.
 *
 * @param raw - the URL exactly as received
 * @returns `{ ok: true, url }` with the raw parts, or `{ ok: false, problem }` naming the first rule broken
 * @see RFC 3986 §3; RFC 9700 §4.1.3
 * @example
 * ```ts
 * parseHttpsUrl('https://app.example/client.json'); // { ok: true, url: { host: 'app.example', ... } }
 * parseHttpsUrl('https://2130706433/x'); // { ok: false, problem: 'numeric host forms ...' }
 * ```
 */
export function parseHttpsUrl(raw: string): HttpsUrlResult {
  if (raw.length > MAX_URL_LENGTH) return refuse(`must be at most ${MAX_URL_LENGTH} characters`);
  if (!raw.startsWith('https://')) return refuse('must start with https://');
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) return refuse('must contain only printable ASCII, without spaces');
  }
  if (raw.includes('\\')) return refuse('must not contain a backslash');
  if (raw.includes('#')) return refuse('must not have a fragment');

  const rest = raw.slice('https://'.length);
  let end = 0;
  while (end < rest.length && rest[end] !== '/' && rest[end] !== '?') end++;
  const authority = rest.slice(0, end);
  const tail = rest.slice(end);
  if (authority.includes('@')) return refuse('must not contain user info (user:password@)');

  let host: string;
  let hostKind: HttpsUrlParts['hostKind'];
  let portText: string | undefined;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close === -1) return refuse('has an unterminated IPv6 address');
    host = authority.slice(1, close);
    if (parseIPv6(host) === undefined) {
      return refuse('has an invalid IPv6 address (zone identifiers are refused)');
    }
    hostKind = 'ipv6';
    const after = authority.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) return refuse('has characters after the IPv6 address');
      portText = after.slice(1);
    }
  } else {
    const colon = authority.indexOf(':');
    host = colon === -1 ? authority : authority.slice(0, colon);
    portText = colon === -1 ? undefined : authority.slice(colon + 1);
    if (host === '') return refuse('must have a host');
    const problem = checkName(host);
    if (problem !== undefined) return refuse(problem);
    hostKind = DOTTED_QUAD.test(host) ? 'ipv4' : 'name';
  }

  let port: number | undefined;
  if (portText !== undefined) {
    if (!PORT.test(portText) || Number(portText) > 65535) {
      return refuse('must have a port of 1-65535 without leading zeros, or none');
    }
    port = Number(portText);
  }

  const q = tail.indexOf('?');
  const path = q === -1 ? tail : tail.slice(0, q);
  const query = q === -1 ? undefined : tail.slice(q + 1);
  if (!isPathText(path)) return refuse('has characters or percent-encoding not allowed in a path');
  if (hasDotSegment(path)) return refuse('must not contain . or .. path segments');
  if (query !== undefined && !isQueryText(query)) {
    return refuse('has characters or percent-encoding not allowed in a query');
  }
  return { ok: true, url: { host, hostKind, port, path, query } };
}
