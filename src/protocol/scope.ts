/**
 * Parsing of the `scope` parameter (RFC 6749 §3.3).
 * @module
 */
import { OAuthError } from '../core/errors.js';

const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const MAX_SCOPE_LENGTH = 4096;
const MAX_SCOPES = 100;

/**
 * Splits a `scope` value into distinct tokens, in order. Refuses characters outside the RFC 6749
 * §3.3 scope-token set and absurd sizes with `invalid_scope`.
 */
export function parseScope(value: string | undefined): string[] {
  if (value === undefined) return [];
  if (value.length > MAX_SCOPE_LENGTH)
    throw new OAuthError('invalid_scope', 'the scope parameter is too long');
  const out: string[] = [];
  const seen = new Set<string>();
  for (const token of value.split(' ')) {
    if (token === '') continue;
    if (!SCOPE_TOKEN.test(token))
      throw new OAuthError('invalid_scope', 'the scope parameter has invalid characters');
    if (seen.has(token)) continue;
    seen.add(token);
    out.push(token);
  }
  if (out.length > MAX_SCOPES) throw new OAuthError('invalid_scope', 'too many scopes requested');
  return out;
}

/** Joins scopes for the wire. */
export function formatScope(scope: readonly string[]): string {
  return scope.join(' ');
}
