/**
 * Where a browser may be sent after login: only back to this origin, so the login page cannot be
 * used as an open redirector (RFC 9700 §4.11).
 * @module
 */

/**
 * The absolute URL to return to, or `fallback` when `value` is absent or leaves the issuer's
 * origin. Accepts an absolute URL on the issuer's origin or a path (`/account`), never `//host`.
 */
export function safeReturnTo(value: string | null | undefined, issuer: string, fallback: string): string {
  if (value === null || value === undefined || value === '') return fallback;
  const origin = new URL(issuer).origin;
  // A path must start with a single `/`; `//evil` and `/\evil` are protocol-relative in browsers.
  const candidate = value.startsWith('/') && !/^\/[/\\]/.test(value) ? `${origin}${value}` : value;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return fallback;
  }
  if (url.origin !== origin || url.username !== '' || url.password !== '') return fallback;
  return url.toString();
}
