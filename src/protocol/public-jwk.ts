/**
 * Public signature keys as JSON Web Keys, shared by client key sets (RFC 7523, RFC 7591 `jwks`)
 * and DPoP proofs (RFC 9449 `jwk` header): which algorithms are supported, which key fits which
 * algorithm, and whether a JWK is a well-formed PUBLIC key (no private or symmetric members).
 *
 * Supported: ES256 (P-256), ES384 (P-384), RS256 and PS256 (RSA, 2048 to 8192 bits), EdDSA and
 * Ed25519 (Ed25519 keys). Never `none`, never HMAC: a shared secret cannot prove a client's key.
 * @see RFC 7517 §4, RFC 7518 §3.1 and §6, RFC 8037 §2, RFC 9864 (Ed25519 as a JWS algorithm)
 * @module
 */
import { calculateJwkThumbprint, importJWK } from 'jose';

/**
 * The JWS algorithms accepted for client assertions and DPoP proofs: asymmetric only.
 *
 * @example
 * ```ts
 * import type { SignatureAlgorithm } from 'portcullis';
 *
 * const advertised: readonly SignatureAlgorithm[] = ['ES256', 'EdDSA', 'RS256'];
 * ```
 * @see RFC 7518 §3.1, RFC 8037 §3.1, RFC 9864 §2
 * @group Client Authentication (RFC 7523)
 */
export type SignatureAlgorithm = 'ES256' | 'ES384' | 'RS256' | 'PS256' | 'EdDSA' | 'Ed25519';

/** Every supported algorithm, in the order they are advertised by default. */
export const SIGNATURE_ALGORITHMS: readonly SignatureAlgorithm[] = Object.freeze([
  'ES256',
  'EdDSA',
  'RS256',
  'PS256',
  'ES384',
  'Ed25519',
]);

/** True when `value` names a supported algorithm. */
export function isSignatureAlgorithm(value: unknown): value is SignatureAlgorithm {
  return typeof value === 'string' && (SIGNATURE_ALGORITHMS as readonly string[]).includes(value);
}

/**
 * A public signature key as accepted here: EC (P-256, P-384), RSA, or OKP (Ed25519). Other
 * members of the JWK (`x5c`, `x5t`, ...) are kept but never used.
 *
 * @example
 * ```ts
 * import type { PublicJwk } from 'portcullis';
 *
 * const key: PublicJwk = {
 *   kty: 'OKP',
 *   crv: 'Ed25519',
 *   x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
 *   kid: 'agent-2026-01',
 *   alg: 'EdDSA',
 * };
 * ```
 * @see RFC 7517 §4, RFC 7518 §6.2.1 and §6.3.1, RFC 8037 §2
 * @group Client Authentication (RFC 7523)
 */
export interface PublicJwk {
  /** Key type. */
  readonly kty: 'EC' | 'RSA' | 'OKP';
  /** Curve (EC, OKP). */
  readonly crv?: string;
  /** Public coordinate or key (EC, OKP). */
  readonly x?: string;
  /** Public coordinate (EC). */
  readonly y?: string;
  /** Modulus (RSA). */
  readonly n?: string;
  /** Exponent (RSA). */
  readonly e?: string;
  /** Key id. */
  readonly kid?: string;
  /** The one algorithm this key is for, when the key says so. */
  readonly alg?: string;
  /** `sig` or `enc`. */
  readonly use?: string;
  /** Operations the key is for, when the key says so. */
  readonly key_ops?: readonly string[];
}

// RFC 7517 §4 and RFC 7518 §6: members that only a private or symmetric key has.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'] as const;
const B64URL = /^[A-Za-z0-9_-]+$/;
const MAX_KID_LENGTH = 200;

/** Base64url characters for `bytes` bytes, without padding. */
function b64Length(bytes: number): number {
  return Math.ceil((bytes * 4) / 3);
}

function b64Member(jwk: Record<string, unknown>, name: string, bytes: number): string | undefined {
  const value = jwk[name];
  if (typeof value !== 'string' || !B64URL.test(value) || value.length !== b64Length(bytes)) {
    return `'${name}' must be the ${bytes}-byte base64url value of the key`;
  }
  return undefined;
}

function rsaProblem(jwk: Record<string, unknown>): string | undefined {
  const { n, e } = jwk;
  // 2048 to 8192 bits (Web Crypto re-checks the modulus length on import).
  if (typeof n !== 'string' || !B64URL.test(n) || n.length < b64Length(256) || n.length > b64Length(1024)) {
    return "'n' must be the base64url modulus of an RSA key of 2048 to 8192 bits";
  }
  if (typeof e !== 'string' || !B64URL.test(e) || e.length > 8) return "'e' must be a base64url exponent";
  return undefined;
}

function keyMaterialProblem(jwk: Record<string, unknown>): string | undefined {
  switch (jwk.kty) {
    case 'EC':
      if (jwk.crv === 'P-256') return b64Member(jwk, 'x', 32) ?? b64Member(jwk, 'y', 32);
      if (jwk.crv === 'P-384') return b64Member(jwk, 'x', 48) ?? b64Member(jwk, 'y', 48);
      return "an EC key must use the curve 'P-256' or 'P-384'";
    case 'OKP':
      if (jwk.crv === 'Ed25519') return b64Member(jwk, 'x', 32);
      return "an OKP key must use the curve 'Ed25519'";
    case 'RSA':
      return rsaProblem(jwk);
    case 'oct':
      return "symmetric keys (kty 'oct') cannot be used: the key set must hold public keys";
    default:
      return "'kty' must be 'EC', 'RSA' or 'OKP'";
  }
}

/**
 * Why `value` is not a well-formed public JWK for signatures, or `undefined` when it is. Checks,
 * in order: an object; no private or symmetric member (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`,
 * `k`); a supported `kty`/`crv` with members of the right size; `kid` a short string; `use` `sig`
 * or `enc`; `key_ops` an array of strings; `alg`, when present, one of `algorithms` that fits the
 * key (a key for encryption, `use: enc`, may name any `alg` and is never used for signatures).
 *
 * @param value - the candidate key, as parsed from JSON
 * @param algorithms - the algorithms a signing key may name
 * @returns the rule broken, in words for an `error_description`, or `undefined`
 * @see RFC 7517 §4, RFC 7518 §6, RFC 8037 §2
 * @example
 * ```ts
 * publicJwkProblem({ kty: 'oct', k: 'c2VjcmV0' }, ['ES256']); // "it contains the private member 'k' ..."
 * ```
 */
export function publicJwkProblem(
  value: unknown,
  algorithms: readonly SignatureAlgorithm[],
): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'a key must be a JSON object';
  const jwk = value as Record<string, unknown>;
  for (const member of PRIVATE_MEMBERS) {
    if (member in jwk) {
      return `it contains the private member '${member}': publish public keys only (and replace this key, it is exposed)`;
    }
  }
  const material = keyMaterialProblem(jwk);
  if (material !== undefined) return material;
  if (
    jwk.kid !== undefined &&
    (typeof jwk.kid !== 'string' || jwk.kid === '' || jwk.kid.length > MAX_KID_LENGTH)
  ) {
    return `'kid' must be a non-empty string of at most ${MAX_KID_LENGTH} characters`;
  }
  if (jwk.use !== undefined && jwk.use !== 'sig' && jwk.use !== 'enc') return "'use' must be 'sig' or 'enc'";
  if (
    jwk.key_ops !== undefined &&
    (!Array.isArray(jwk.key_ops) || !jwk.key_ops.every((op) => typeof op === 'string'))
  ) {
    return "'key_ops' must be an array of strings";
  }
  if (jwk.alg !== undefined) {
    if (typeof jwk.alg !== 'string') return "'alg' must be a string";
    if (jwk.use !== 'enc') {
      if (!isSignatureAlgorithm(jwk.alg) || !algorithms.includes(jwk.alg)) {
        return `'alg' must be one of ${algorithms.join(', ')}`;
      }
      if (!fitsAlgorithm(jwk as unknown as PublicJwk, jwk.alg))
        return `the key does not fit its 'alg' ${jwk.alg}`;
    }
  }
  return undefined;
}

/** True when a key of this type and curve can verify `alg` (ignoring the key's own `alg`). */
function fitsAlgorithm(jwk: PublicJwk, alg: SignatureAlgorithm): boolean {
  switch (alg) {
    case 'ES256':
      return jwk.kty === 'EC' && jwk.crv === 'P-256';
    case 'ES384':
      return jwk.kty === 'EC' && jwk.crv === 'P-384';
    case 'RS256':
    case 'PS256':
      return jwk.kty === 'RSA';
    case 'EdDSA':
    case 'Ed25519':
      return jwk.kty === 'OKP' && jwk.crv === 'Ed25519';
  }
}

/**
 * True when `jwk` may verify a JWS signed with `alg`: the key type and curve fit, the key's own
 * `alg` (if any) is `alg` (`EdDSA` and `Ed25519` count as one), it is not for encryption only, and
 * its `key_ops` (if any) include `verify`.
 *
 * @param jwk - a key that passed {@link publicJwkProblem}
 * @param alg - the `alg` of the JWS header
 * @returns whether to try this key
 * @see RFC 7517 §4.2 (`use`), §4.3 (`key_ops`), §4.4 (`alg`); RFC 7515 §4.1.1
 * @example
 * ```ts
 * keyVerifies({ kty: 'EC', crv: 'P-256', x: '...', y: '...' }, 'ES256'); // true
 * ```
 */
export function keyVerifies(jwk: PublicJwk, alg: SignatureAlgorithm): boolean {
  if (!fitsAlgorithm(jwk, alg)) return false;
  if (jwk.use === 'enc') return false;
  if (jwk.key_ops !== undefined && !jwk.key_ops.includes('verify')) return false;
  if (jwk.alg === undefined || jwk.alg === alg) return true;
  const eddsa = (a: string) => a === 'EdDSA' || a === 'Ed25519';
  return eddsa(jwk.alg) && eddsa(alg);
}

/** The members that make the key, and nothing else (no `key_ops`, `ext`, `use` to trip the import). */
function keyMembers(jwk: PublicJwk): Record<string, string> {
  if (jwk.kty === 'RSA') return { kty: 'RSA', n: jwk.n ?? '', e: jwk.e ?? '' };
  if (jwk.kty === 'EC') return { kty: 'EC', crv: jwk.crv ?? '', x: jwk.x ?? '', y: jwk.y ?? '' };
  return { kty: 'OKP', crv: jwk.crv ?? '', x: jwk.x ?? '' };
}

/**
 * Imports a public key for `alg` through Web Crypto; `undefined` when the runtime refuses it (an
 * EC point off the curve, say): such a key verifies nothing.
 *
 * @param jwk - a key that passed {@link publicJwkProblem} and {@link keyVerifies}
 * @param alg - the algorithm to verify with
 * @returns the key, or `undefined`
 * @see RFC 7517 §4
 * @example
 * ```ts
 * declare const jwk: PublicJwk;
 * const key = await importPublicJwk(jwk, 'ES256');
 * ```
 */
export async function importPublicJwk(
  jwk: PublicJwk,
  alg: SignatureAlgorithm,
): Promise<CryptoKey | undefined> {
  try {
    const key = await importJWK(keyMembers(jwk), alg);
    return key instanceof Uint8Array ? undefined : key;
  } catch {
    return undefined;
  }
}

/**
 * The JWK SHA-256 thumbprint (RFC 7638) of a public key, base64url: the `jkt` of DPoP (RFC 9449
 * §6) and a stable name for a key without `kid`.
 *
 * @param jwk - a key that passed {@link publicJwkProblem}
 * @returns 43 base64url characters
 * @see RFC 7638 §3, RFC 9449 §6.1
 * @example
 * ```ts
 * await jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' });
 * // 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k' (RFC 8037 Appendix A.3)
 * ```
 */
export function jwkThumbprint(jwk: PublicJwk): Promise<string> {
  return calculateJwkThumbprint(keyMembers(jwk), 'sha256');
}
