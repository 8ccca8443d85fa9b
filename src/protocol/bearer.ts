/**
 * Reading a bearer token from a request (RFC 6750 §2): the `Authorization` header only (and, where
 * an endpoint allows it, the form body). Tokens in the URL are ignored, never used (OAuth 2.1 §5.1).
 * @module
 */
import { OAuthError } from '../core/errors.js';

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MAX_TOKEN_LENGTH = 8192;

/** The result of reading a bearer token. */
export type BearerCredential =
  | { readonly present: false }
  | { readonly present: true; readonly token: string; readonly from: 'header' | 'body' };

/**
 * Reads the bearer token of a request.
 * - no `Authorization` header (and no body token) → `{ present: false }`;
 * - two `Authorization` headers, a non-Bearer scheme, an empty credential, a header and a body token
 *   together → `invalid_request` (400);
 * - characters outside b64token → `invalid_token` (401).
 */
export function readBearer(
  headers: Readonly<Record<string, string | undefined>>,
  bodyToken?: string | undefined,
): BearerCredential {
  const header = headers.authorization;
  if (header === undefined) {
    if (bodyToken === undefined) return { present: false };
    return checked(bodyToken, 'body');
  }
  if (header.includes(','))
    throw new OAuthError('invalid_request', 'the Authorization header was sent more than once');
  if (bodyToken !== undefined) {
    throw new OAuthError(
      'invalid_request',
      'the access token was sent both in the Authorization header and in the body',
    );
  }
  const trimmed = header.trim();
  const space = trimmed.indexOf(' ');
  const scheme = space === -1 ? trimmed : trimmed.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') {
    throw new OAuthError('invalid_request', 'use the Bearer authentication scheme');
  }
  // RFC 6750 §2.1: "Bearer" 1*SP b64token. Spaces only: a tab or another blank before the token
  // makes it malformed rather than being skipped.
  const token = space === -1 ? '' : trimmed.slice(space + 1).replace(/^ +/, '');
  if (token === '') throw new OAuthError('invalid_request', 'the Bearer credential is empty');
  return checked(token, 'header');
}

function checked(token: string, from: 'header' | 'body'): BearerCredential {
  if (token.length > MAX_TOKEN_LENGTH || !B64TOKEN.test(token)) {
    throw new OAuthError('invalid_token', 'the access token is malformed');
  }
  return { present: true, token, from };
}

/** Quotes a value for a `WWW-Authenticate` parameter (values are already restricted to the RFC 6749 charset). */
function quote(value: string): string {
  return `"${value.replace(/["\\]/g, '')}"`;
}

/** Builds a `Bearer` challenge; parameters with `undefined` values are left out, each appears once. */
export function bearerChallenge(params: Readonly<Record<string, string | undefined>>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) parts.push(`${name}=${quote(value)}`);
  }
  return parts.length === 0 ? 'Bearer' : `Bearer ${parts.join(', ')}`;
}
