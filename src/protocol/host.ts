/**
 * The `Host` check (ABU-06): a request names the host it was sent to, and a server that answers
 * for any name can be reached by DNS rebinding (a page whose host name an attacker points at
 * 127.0.0.1, or at an internal address, reads the answers as same-origin). The server answers
 * only for the issuer's host name and the names the host configures; on a loopback issuer, for
 * every loopback name (`localhost`, `127.0.0.1`, `[::1]`), which a browser on this machine may use
 * interchangeably. Ports are not compared: a rebinding page cannot choose the host name, and a
 * proxy in front may listen on another port than the server.
 * @see RFC 9110 §7.2 (Host and :authority), §15.5.20 (421 Misdirected Request)
 * @module
 */
import { OAuthError } from '../core/errors.js';

/**
 * Options of {@link createHostCheck}.
 *
 * @example
 * ```ts
 * import type { HostCheckOptions } from 'portcullis';
 *
 * const options: HostCheckOptions = { issuer: 'https://auth.example.com', allowedHosts: ['10.0.0.7'] };
 * ```
 * @see RFC 9110 §7.2
 * @group Authorization Server
 */
export interface HostCheckOptions {
  /** The issuer: its host name is always accepted. */
  readonly issuer: string;
  /**
   * More host names to answer for (lower case, without port; an IPv6 address in brackets), such as
   * the address a load balancer's health check uses. `'*'` accepts any host: only behind a proxy
   * that checks the host itself.
   */
  readonly allowedHosts?: readonly string[] | undefined;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** A host name as written in `Host` (or in `allowedHosts`): a DNS name, IPv4, or bracketed IPv6. */
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?)(?::([0-9]{1,5}))?$/;

/** The host name of a `Host` header value, lower-cased, without port or trailing dot; `undefined` when malformed. */
export function hostnameOf(header: string): string | undefined {
  const match = HOST.exec(header.trim().toLowerCase());
  if (match === null) return undefined;
  return match[1]!.replace(/\.$/, '');
}

/**
 * Creates the check of the `Host` a request was sent to: true for the issuer's host name, for
 * every loopback name when the issuer is on loopback, and for `allowedHosts`. A request without
 * `Host` (an in-process call, HTTP/1.0) passes: a browser always sends one.
 *
 * @param options - the issuer and the extra host names
 * @returns `(host) => allowed`, given the `Host` header (or HTTP/2 `:authority`)
 * @see RFC 9110 §7.2; RFC 9700 §4.1 (DNS rebinding)
 * @example
 * ```ts
 * import { createHostCheck } from 'portcullis';
 *
 * const allowed = createHostCheck({ issuer: 'http://127.0.0.1:3000' });
 * allowed('localhost:3000'); // true
 * allowed('attacker.example:3000'); // false: a DNS-rebinding page
 * ```
 * @group Authorization Server
 */
export function createHostCheck(options: HostCheckOptions): (host: string | undefined) => boolean {
  const issuerHost = new URL(options.issuer).hostname;
  const names = new Set([issuerHost, ...(options.allowedHosts ?? []).map((h) => h.toLowerCase())]);
  if (LOOPBACK_NAMES.includes(issuerHost)) for (const name of LOOPBACK_NAMES) names.add(name);
  if (names.has('*')) return () => true;
  return (host) => {
    if (host === undefined) return true;
    const name = hostnameOf(host);
    return name !== undefined && names.has(name);
  };
}

/** The refusal of a request sent to another host: `421 invalid_request`, naming nothing of the request. */
export function misdirected(): OAuthError {
  return new OAuthError('invalid_request', 'this server does not answer for the host this request names', {
    status: 421,
  });
}
