/**
 * Redirect URI rules, on raw strings. Nothing here calls `new URL()`: WHATWG parsing folds
 * `１２７.０.０.１`, `2130706433` and `0x7f.1` into `127.0.0.1` and strips TAB and LF, which is how
 * "equal after parsing" comparisons get bypassed (RFC 9700 §4.1.3).
 *
 * Rule (documented in docs/security.md): a loopback redirect URI is
 * `http://` + one of `127.0.0.1`, `[::1]`, `localhost` + an optional port (1-65535, no leading zero)
 * + a path and query of RFC 3986 characters, no fragment, no dot segments. Its port is ignored when
 * matching (RFC 8252 §7.3); scheme, host, path and query must be byte-identical. Each host matches
 * only itself. Every other URI must match exactly.
 * @module
 */

import { hasDotSegment, isPathText, isQueryText, MAX_URL_LENGTH, parseHttpsUrl } from './url.js';

const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::([0-9]+))?([/?].*)?$/;

/** Longest redirect URI accepted anywhere. */
export const MAX_REDIRECT_URI_LENGTH = MAX_URL_LENGTH;

/** A loopback redirect URI split into the part that must match exactly and its port. */
interface LoopbackParts {
  /** The URI without its port: `http://127.0.0.1/cb?x=1`. */
  readonly portless: string;
  readonly port: number | undefined;
}

/** Parses a loopback redirect URI by the rule above; `undefined` when it is not one. */
export function parseLoopback(uri: string): LoopbackParts | undefined {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return undefined;
  const m = LOOPBACK.exec(uri);
  if (m === null) return undefined;
  const host = m[1]!;
  const portText = m[2];
  const rest = m[3] ?? '';
  let port: number | undefined;
  if (portText !== undefined) {
    if (portText.length > 5 || portText.startsWith('0')) return undefined;
    port = Number(portText);
    if (port < 1 || port > 65535) return undefined;
  }
  const q = rest.indexOf('?');
  const path = q === -1 ? rest : rest.slice(0, q);
  const query = q === -1 ? undefined : rest.slice(q + 1);
  if (!isPathText(path) || hasDotSegment(path)) return undefined;
  if (query !== undefined && !isQueryText(query)) return undefined;
  return { portless: `http://${host}${rest}`, port };
}

/** Why a redirect URI was refused at registration, or `undefined` when it is acceptable. */
export function checkRegisteredRedirectUri(uri: string, allowHttps: boolean): string | undefined {
  if (parseLoopback(uri) !== undefined) return undefined;
  // The shared https grammar also refuses numeric host forms (`https://2130706433/cb`) and user info.
  if (allowHttps && parseHttpsUrl(uri).ok) return undefined;
  if (uri.startsWith('https://')) {
    return 'fixed https redirect URIs need a registered integration; dynamic registration accepts only loopback URIs such as http://127.0.0.1:<port>/callback';
  }
  return 'must be a loopback URI: http://127.0.0.1:<port>/path, http://[::1]:<port>/path or http://localhost:<port>/path, without fragment, user info or dot segments';
}

/**
 * Finds the registered redirect URI that `requested` matches: exact string equality, except that a
 * loopback URI may carry any port (RFC 8252 §7.3). Returns the registered entry, or `undefined`.
 */
export function matchRedirectUri(requested: string, registered: readonly string[]): string | undefined {
  // RFC 6749 §3.1.2: never a fragment, whatever a client record holds (codes would land in it).
  if (requested.includes('#')) return undefined;
  const loopback = parseLoopback(requested);
  for (const candidate of registered) {
    if (candidate === requested) return candidate;
    if (loopback !== undefined) {
      const other = parseLoopback(candidate);
      if (other !== undefined && other.portless === loopback.portless) return candidate;
    }
  }
  return undefined;
}

/** True for a loopback redirect URI (used to show a warning on the consent page). */
export function isLoopbackRedirect(uri: string): boolean {
  return parseLoopback(uri) !== undefined;
}

/** `host:port` of a redirect URI, from the raw string, for display. */
export function redirectHostPort(uri: string): string {
  const start = uri.indexOf('//') + 2;
  let end = start;
  while (end < uri.length && uri[end] !== '/' && uri[end] !== '?' && uri[end] !== '#') end++;
  return uri.slice(start, end);
}

/** The origin (`scheme://host:port`) of a redirect URI, from the raw string. */
export function redirectOrigin(uri: string): string {
  const start = uri.indexOf('//') + 2;
  let end = start;
  while (end < uri.length && uri[end] !== '/' && uri[end] !== '?' && uri[end] !== '#') end++;
  return uri.slice(0, end);
}

/** Appends response parameters to a redirect URI that may already have a query (RFC 6749 §3.1.2). */
export function appendQuery(uri: string, params: Readonly<Record<string, string | undefined>>): string {
  let query = '';
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    query += `${query === '' ? '' : '&'}${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
  }
  if (query === '') return uri;
  const q = uri.indexOf('?');
  if (q === -1) return `${uri}?${query}`;
  return q === uri.length - 1 ? `${uri}${query}` : `${uri}&${query}`;
}
