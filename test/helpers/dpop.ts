/**
 * A DPoP client for the tests (RFC 9449 §4): a key pair, its thumbprint, and proofs for a method
 * and URL at a given time, with the access token hash (`ath`) and a server nonce when asked. Any
 * claim or header can be overridden, to write the proofs an attacker would.
 */
import { base64url, CompactSign, calculateJwkThumbprint, type JWK } from 'jose';
import type { SignatureAlgorithm } from '../../src/protocol/public-jwk.js';
import { type TestKey, testKey } from '../protocol/key-fixtures.js';

export interface ProofOptions {
  readonly accessToken?: string;
  readonly nonce?: string;
  /** Epoch seconds; default the client's clock. */
  readonly iat?: number;
  readonly claims?: Readonly<Record<string, unknown>>;
  readonly header?: Readonly<Record<string, unknown>>;
}

export interface DpopTestClient {
  readonly key: TestKey;
  /** The key's RFC 7638 thumbprint: the `cnf.jkt` of tokens bound to it. */
  readonly jkt: string;
  proof(method: string, url: string, options?: ProofOptions): Promise<string>;
}

const encoder = new TextEncoder();

/** base64url(SHA-256(token)), as a client computes `ath`. */
export async function athOf(accessToken: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', encoder.encode(accessToken));
  return base64url.encode(new Uint8Array(digest));
}

/** A DPoP client with a fresh key of `alg`, whose proofs are dated by `now` (epoch seconds). */
export async function dpopClient(
  now: () => number,
  alg: SignatureAlgorithm = 'ES256',
): Promise<DpopTestClient> {
  const key = await testKey(alg);
  const jkt = await calculateJwkThumbprint(key.publicJwk as JWK, 'sha256');
  return {
    key,
    jkt,
    async proof(method, url, options = {}) {
      const claims = {
        jti: crypto.randomUUID(),
        htm: method,
        htu: url,
        iat: options.iat ?? now(),
        ...(options.accessToken === undefined ? {} : { ath: await athOf(options.accessToken) }),
        ...(options.nonce === undefined ? {} : { nonce: options.nonce }),
        ...options.claims,
      };
      return new CompactSign(encoder.encode(JSON.stringify(claims)))
        .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.publicJwk as JWK, ...options.header })
        .sign(key.privateKey);
    },
  };
}
