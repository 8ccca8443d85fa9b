/**
 * Cookie parsing and serialisation (RFC 6265), only what the sessions need.
 * @module
 */

/** Reads one cookie from a `Cookie` header; `undefined` when absent. The first occurrence wins. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Attributes of a cookie this server sets. */
export interface CookieAttributes {
  readonly httpOnly: boolean;
  readonly secure: boolean;
  readonly sameSite: 'Lax' | 'Strict';
  /** Seconds; 0 deletes the cookie. Absent: a browser-session cookie. */
  readonly maxAge?: number;
}

/** A `Set-Cookie` value. Values are base64url or hex, so they need no quoting. */
export function serializeCookie(name: string, value: string, attributes: CookieAttributes): string {
  let cookie = `${name}=${value}; Path=/; SameSite=${attributes.sameSite}`;
  if (attributes.httpOnly) cookie += '; HttpOnly';
  if (attributes.secure) cookie += '; Secure';
  if (attributes.maxAge !== undefined) cookie += `; Max-Age=${attributes.maxAge}`;
  return cookie;
}
