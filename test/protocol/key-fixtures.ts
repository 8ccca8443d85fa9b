/**
 * Keys and signed JWTs for the tests of client assertions (RFC 7523) and DPoP proofs (RFC 9449):
 * one key pair per supported algorithm, made once per test file, and a signer that can also write
 * the headers an attacker would (`alg: none`, HMAC, `crit`, an embedded private key).
 */
import { base64url, CompactSign, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { PublicJwk, SignatureAlgorithm } from '../../src/protocol/public-jwk.js';

/** A key pair of one algorithm: the private key signs, the public JWK is what the server knows. */
export interface TestKey {
  readonly alg: SignatureAlgorithm;
  readonly privateKey: CryptoKey;
  readonly privateJwk: JWK;
  readonly publicJwk: PublicJwk;
}

/** Generates a key pair for `alg`, its public JWK carrying `kid` when given. */
export async function testKey(alg: SignatureAlgorithm, kid?: string): Promise<TestKey> {
  const pair = await generateKeyPair(alg, { extractable: true });
  const publicJwk = (await exportJWK(pair.publicKey)) as PublicJwk;
  return {
    alg,
    privateKey: pair.privateKey,
    privateJwk: await exportJWK(pair.privateKey),
    publicJwk: kid === undefined ? publicJwk : { ...publicJwk, kid },
  };
}

const encoder = new TextEncoder();

/** Signs `claims` with `key` under exactly `header` (plus `alg` unless the header sets it). */
export function sign(
  key: TestKey,
  claims: Readonly<Record<string, unknown>>,
  header: Readonly<Record<string, unknown>> = {},
): Promise<string> {
  return new CompactSign(encoder.encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: key.alg, ...header })
    .sign(key.privateKey);
}

/** A JWT with `alg: none` and an empty or made-up signature, as an attacker writes it. */
export function unsigned(
  claims: Readonly<Record<string, unknown>>,
  header: Readonly<Record<string, unknown>> = { alg: 'none' },
  signature = '',
): string {
  const part = (value: unknown) => base64url.encode(JSON.stringify(value));
  return `${part(header)}.${part(claims)}.${signature}`;
}

/** An HS256 JWT whose secret is `secret`: the key-confusion attack (the public key as HMAC key). */
export async function hmacSigned(
  secret: Uint8Array,
  claims: Readonly<Record<string, unknown>>,
  header: Readonly<Record<string, unknown>> = {},
): Promise<string> {
  return new CompactSign(encoder.encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: 'HS256', ...header })
    .sign(secret);
}

/** Keys of every supported algorithm, made once per importing file. */
export const KEYS = {
  ES256: await testKey('ES256', 'es256-1'),
  ES384: await testKey('ES384', 'es384-1'),
  RS256: await testKey('RS256', 'rs256-1'),
  PS256: await testKey('PS256', 'ps256-1'),
  EdDSA: await testKey('EdDSA', 'eddsa-1'),
  Ed25519: await testKey('Ed25519', 'ed25519-1'),
} satisfies Record<SignatureAlgorithm, TestKey>;
