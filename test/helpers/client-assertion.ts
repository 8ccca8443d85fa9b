/**
 * Client assertions (RFC 7523 §2.2, OpenID Connect Core §9) as a `private_key_jwt` client signs
 * them, and the token-request parameters that carry one. Attack variants start from these and
 * override claims or header.
 */
import { randomUUID } from 'node:crypto';
import { sign, type TestKey } from '../protocol/key-fixtures.js';

/** `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2). */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** When and for whom an assertion is made; `claims` and `header` override the defaults. */
export interface AssertionOptions {
  /** The current time, in seconds: `iat`, and `exp` 60 s after it. */
  readonly now: number;
  /** The audience: the issuer, or the endpoint's URL. */
  readonly aud: string;
  readonly claims?: Readonly<Record<string, unknown>>;
  readonly header?: Readonly<Record<string, unknown>>;
}

/**
 * A client assertion of `clientId` signed by `key`: `iss` = `sub` = `clientId`, `exp` 60 s after
 * `now`, a fresh `jti`, and the key's `kid` in the header.
 */
export function clientAssertion(key: TestKey, clientId: string, options: AssertionOptions): Promise<string> {
  const { now, aud } = options;
  return sign(
    key,
    { iss: clientId, sub: clientId, aud, iat: now, exp: now + 60, jti: randomUUID(), ...options.claims },
    { kid: key.publicJwk.kid, ...options.header },
  );
}

/** The parameters that authenticate a token, revocation or introspection request with `assertion`. */
export function asAssertion(assertion: string): { client_assertion_type: string; client_assertion: string } {
  return { client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: assertion };
}
