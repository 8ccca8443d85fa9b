/**
 * DPoP proofs (RFC 9449): checking the `DPoP` header of a request at the token endpoint, UserInfo
 * or a resource server, and the `WWW-Authenticate: DPoP` challenge.
 *
 * The checks of RFC 9449 §4.3, in order: exactly one `DPoP` header → a compact JWS of bounded size
 * → `typ` `dpop+jwt` → `alg` asymmetric and allowed → `jwk` a public key that fits `alg` → the
 * signature, by that key → claims `jti`, `htm`, `htu`, `iat` → `htm` = the request method → `htu`
 * = the request URL without query and fragment, both normalised (RFC 3986 §6.2.2, §6.2.3: scheme
 * and host case, default port, percent-encoding, dot segments) → the server nonce, when nonces are
 * on → `iat` within ±`iatWindowSeconds` (60) of now → `ath` = base64url(SHA-256(access token))
 * when the proof comes with an access token → the `jti` unused for this key (recorded until the
 * proof could no longer be accepted, last, so only valid proofs are recorded).
 *
 * Errors: `invalid_dpop_proof` and `use_dpop_nonce` (with a `DPoP-Nonce` header), 400 at the
 * authorization server (§5, §8); 401 with a `WWW-Authenticate: DPoP` challenge naming `algs` at a
 * resource (§7.1, §9).
 * @see RFC 9449 §4, §5, §7.1, §8, §9, §11.1; RFC 7638
 * @module
 */
import { base64url, compactVerify, decodeProtectedHeader, errors as joseErrors } from 'jose';
import { type Clock, nowSeconds } from '../core/context.js';
import { OAuthError } from '../core/errors.js';
import type { DpopNonceSource } from './dpop-nonce.js';
import {
  importPublicJwk,
  isSignatureAlgorithm,
  jwkThumbprint,
  keyVerifies,
  type PublicJwk,
  publicJwkProblem,
  SIGNATURE_ALGORITHMS,
  type SignatureAlgorithm,
} from './public-jwk.js';
import { type ReplayStore, replayKey } from './replay-store.js';

/** Defaults of {@link DpopProofOptions}. */
export const DPOP_DEFAULTS = Object.freeze({
  iatWindowSeconds: 60,
  maxBytes: 8192,
});

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const MAX_JTI = 256;
const MAX_CLAIM = 2000;

/**
 * The request a DPoP proof is checked against.
 *
 * @example
 * ```ts
 * import type { DpopRequest } from 'portcullis';
 *
 * declare const proofHeader: string;
 * const request: DpopRequest = {
 *   dpop: [proofHeader],
 *   method: 'POST',
 *   url: 'https://auth.example.com/oauth/token',
 * };
 * ```
 * @see RFC 9449 §4.3
 * @group DPoP (RFC 9449)
 */
export interface DpopRequest {
  /**
   * The `DPoP` header as received: one string (several headers joined with `, ` by the runtime),
   * or one entry per header line. Anything but exactly one proof is refused.
   */
  readonly dpop: string | readonly string[] | undefined;
  /** The request method, upper case (`POST`). */
  readonly method: string;
  /** The absolute URL the request was sent to, as the client sees this server; query and fragment are ignored. */
  readonly url: string;
  /** The access token the proof comes with (resources, UserInfo): `ath` is then required and checked. */
  readonly accessToken?: string | undefined;
}

/**
 * Options of {@link verifyDpopProof}.
 *
 * @example
 * ```ts
 * import { type DpopProofOptions, memoryReplayStore } from 'portcullis';
 *
 * const atTokenEndpoint: DpopProofOptions = { at: 'authorization_server', replayStore: memoryReplayStore() };
 * const atResource: DpopProofOptions = {
 *   at: 'resource',
 *   replayStore: memoryReplayStore(),
 *   challenge: { resource_metadata: 'https://api.example.com/.well-known/oauth-protected-resource' },
 * };
 * ```
 * @see RFC 9449 §4.3, §5, §7.1
 * @group DPoP (RFC 9449)
 */
export interface DpopProofOptions {
  /** Where the proof is checked: decides the status and headers of the errors (400 JSON, or 401 with a challenge). */
  readonly at: 'authorization_server' | 'resource';
  /** Where used proofs are recorded (shared by all instances). */
  readonly replayStore: ReplayStore;
  /** Accepted `alg`s (`dpop_signing_alg_values_supported`). Default: all supported. */
  readonly algorithms?: readonly SignatureAlgorithm[];
  /** How far `iat` may be from now, either way, in seconds. Default 60. */
  readonly iatWindowSeconds?: number;
  /** When set, proofs must carry a current server nonce (`use_dpop_nonce` otherwise). Default: none. */
  readonly nonces?: DpopNonceSource | undefined;
  /** Clock, epoch milliseconds. Default `Date.now`. */
  readonly clock?: Clock;
  /** At a resource: further parameters of the `WWW-Authenticate: DPoP` challenge (`resource_metadata`, `scope`, `realm`). */
  readonly challenge?: Readonly<Record<string, string | undefined>>;
  /** At a resource: challenges of other schemes sent with the DPoP one (a `Bearer` challenge). */
  readonly otherChallenges?: readonly string[];
}

/**
 * A verified DPoP proof.
 *
 * @example
 * ```ts
 * import type { VerifiedDpopProof } from 'portcullis';
 *
 * declare const proof: VerifiedDpopProof;
 * const cnf = { jkt: proof.jkt }; // binds the access token to the proof's key (RFC 9449 §6)
 * ```
 * @see RFC 9449 §4.2, §6
 * @group DPoP (RFC 9449)
 */
export interface VerifiedDpopProof {
  /** The JWK SHA-256 thumbprint of the proof's key (RFC 7638): the `cnf.jkt` of bound tokens. */
  readonly jkt: string;
  /** The proof's public key. */
  readonly jwk: PublicJwk;
  /** The algorithm it was signed with. */
  readonly alg: SignatureAlgorithm;
  /** The proof's `jti`, now used up. */
  readonly jti: string;
  /** The proof's `iat`, epoch seconds. */
  readonly issuedAt: number;
}

/**
 * Builds a `WWW-Authenticate: DPoP` challenge: `algs` first, then the other parameters, each at
 * most once, values quoted (`"` and `\` removed).
 *
 * @param algs - the accepted algorithms (`dpop_signing_alg_values_supported`)
 * @param params - `error`, `error_description`, `scope`, `resource_metadata`, `realm`; `undefined` values are left out
 * @returns the challenge
 * @see RFC 9449 §7.1; RFC 6750 §3; RFC 9728 §5.1
 * @example
 * ```ts
 * import { dpopChallenge } from 'portcullis';
 *
 * dpopChallenge(['ES256', 'EdDSA'], { error: 'invalid_token' });
 * // 'DPoP algs="ES256 EdDSA", error="invalid_token"'
 * ```
 * @group DPoP (RFC 9449)
 */
export function dpopChallenge(
  algs: readonly string[],
  params: Readonly<Record<string, string | undefined>> = {},
): string {
  const parts = [`algs="${algs.join(' ')}"`];
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && name !== 'algs') parts.push(`${name}="${value.replace(/["\\]/g, '')}"`);
  }
  return `DPoP ${parts.join(', ')}`;
}

/** The error of a failed check, shaped for where it is answered. */
function dpopError(
  options: DpopProofOptions,
  code: 'invalid_dpop_proof' | 'use_dpop_nonce',
  description: string,
  nonce?: string,
): OAuthError {
  const headers: Record<string, string> = nonce === undefined ? {} : { 'dpop-nonce': nonce };
  if (options.at === 'authorization_server') return new OAuthError(code, description, { headers });
  const challenge = dpopChallenge(options.algorithms ?? SIGNATURE_ALGORITHMS, {
    ...options.challenge,
    error: code,
    error_description: new OAuthError(code, description).description,
  });
  headers['www-authenticate'] = [challenge, ...(options.otherChallenges ?? [])].join(', ');
  return new OAuthError(code, description, { status: 401, headers });
}

/**
 * The one proof of a request, or `undefined` when there is none. Two `DPoP` headers, or one with
 * two values (a comma), are refused: a proof has no comma.
 *
 * @param dpop - the `DPoP` header as received ({@link DpopRequest.dpop})
 * @returns the proof, or `undefined`
 * @throws OAuthError `invalid_dpop_proof` (400) for more than one value or an empty one
 * @see RFC 9449 §4.3 (item 1)
 * @example
 * ```ts
 * readDpopHeader(undefined); // undefined
 * readDpopHeader(['a.b.c', 'd.e.f']); // throws invalid_dpop_proof
 * ```
 */
export function readDpopHeader(dpop: string | readonly string[] | undefined): string | undefined {
  const values = typeof dpop === 'string' ? [dpop] : (dpop ?? []);
  if (values.length === 0) return undefined;
  const value = values[0]!.trim();
  if (values.length > 1 || value.includes(',')) {
    throw new OAuthError('invalid_dpop_proof', 'send exactly one DPoP header');
  }
  if (value === '') throw new OAuthError('invalid_dpop_proof', 'the DPoP header is empty');
  return value;
}

/**
 * `ath`: base64url(SHA-256(ASCII(access token))), Web Crypto only.
 *
 * @param accessToken - the access token
 * @returns 43 base64url characters
 * @see RFC 9449 §4.2
 * @example
 * ```ts
 * await accessTokenHash('Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU'); // 'fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo' (RFC 9449 §7.1)
 * ```
 */
export async function accessTokenHash(accessToken: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(accessToken));
  return base64url.encode(new Uint8Array(digest));
}

const UNRESERVED_ESCAPE = /%(?:4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A]|3[0-9]|2D|2E|5F|7E)/gi;

/**
 * The comparable form of an http(s) URL without its query and fragment: scheme and host lower
 * case, default port dropped, dot segments resolved, an empty path as `/` (WHATWG URL parsing),
 * percent-encoded unreserved characters decoded and the other escapes upper case (RFC 3986
 * §6.2.2.1, §6.2.2.2). `undefined` for anything else (other schemes, user info, unparsable).
 *
 * @param url - an absolute URL
 * @returns the normalised URL, or `undefined`
 * @see RFC 9449 §4.3 (item 9); RFC 3986 §6.2.2, §6.2.3
 * @example
 * ```ts
 * normalizeHtu('HTTPS://API.Example.com:443/a/./b%7e?q=1#f'); // 'https://api.example.com/a/b~'
 * ```
 */
export function normalizeHtu(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (
    (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') ||
    parsed.username !== '' ||
    parsed.password !== ''
  ) {
    return undefined;
  }
  const path = parsed.pathname
    .replace(/%[0-9a-f]{2}/gi, (pct) => pct.toUpperCase())
    .replace(UNRESERVED_ESCAPE, (pct) => String.fromCharCode(Number.parseInt(pct.slice(1), 16)));
  return `${parsed.protocol}//${parsed.host}${path}`;
}

function stringClaim(value: unknown, max: number): value is string {
  return typeof value === 'string' && value !== '' && value.length <= max;
}

function isTypDpop(typ: unknown): boolean {
  return typeof typ === 'string' && typ.toLowerCase().replace(/^application\//, '') === 'dpop+jwt';
}

/**
 * Verifies the DPoP proof of a request and uses up its `jti`. See the module description for the
 * checks and their order.
 *
 * @param request - the `DPoP` header, method, URL, and the access token when one is presented
 * @param options - where it runs, the replay store, algorithms, iat window, nonces
 * @returns the proof's key, its thumbprint (`jkt`) and claims
 * @throws OAuthError `invalid_dpop_proof` for a missing, repeated, malformed, mis-signed, mistimed,
 * mis-targeted or replayed proof; `use_dpop_nonce` with a `DPoP-Nonce` header when nonces are on and
 * the proof has no current one (400 at the authorization server; 401 with `WWW-Authenticate: DPoP`
 * at a resource); `temporarily_unavailable` when the memory replay store is full
 * @see RFC 9449 §4.3, §5, §7.1, §8, §9, §11.1
 * @example
 * ```ts
 * import { memoryReplayStore, verifyDpopProof } from 'portcullis';
 *
 * declare const dpopHeader: string | undefined;
 * const proof = await verifyDpopProof(
 *   { dpop: dpopHeader, method: 'POST', url: 'https://auth.example.com/oauth/token' },
 *   { at: 'authorization_server', replayStore: memoryReplayStore() },
 * );
 * console.log(proof.jkt); // bind the tokens to this key
 * ```
 * @group DPoP (RFC 9449)
 */
export async function verifyDpopProof(
  request: DpopRequest,
  options: DpopProofOptions,
): Promise<VerifiedDpopProof> {
  const algorithms = options.algorithms ?? SIGNATURE_ALGORITHMS;
  const window = options.iatWindowSeconds ?? DPOP_DEFAULTS.iatWindowSeconds;
  const invalid = (description: string) => dpopError(options, 'invalid_dpop_proof', description);

  let proof: string | undefined;
  try {
    proof = readDpopHeader(request.dpop);
  } catch (error) {
    throw error instanceof OAuthError ? invalid(error.description ?? 'send exactly one DPoP header') : error;
  }
  if (proof === undefined) throw invalid('a DPoP proof is required: send it in the DPoP header');
  if (proof.length > DPOP_DEFAULTS.maxBytes)
    throw invalid(`the DPoP proof is longer than ${DPOP_DEFAULTS.maxBytes} bytes`);
  if (!COMPACT_JWS.test(proof)) throw invalid('the DPoP proof is not a signed JWT (compact JWS)');

  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(proof) as Record<string, unknown>;
  } catch {
    throw invalid('the DPoP proof header is not a JSON object');
  }
  if (!isTypDpop(header.typ)) throw invalid('the DPoP proof typ must be dpop+jwt');
  const { alg, jwk } = header;
  if (!isSignatureAlgorithm(alg) || !algorithms.includes(alg)) {
    throw invalid(`the DPoP proof alg must be one of ${algorithms.join(', ')}`);
  }
  if (header.crit !== undefined) throw invalid('the DPoP proof must not have a crit header');
  const keyProblem = publicJwkProblem(jwk, algorithms);
  if (keyProblem !== undefined) throw invalid(`the DPoP proof jwk is not a usable public key: ${keyProblem}`);
  const publicJwk = jwk as PublicJwk;
  if (!keyVerifies(publicJwk, alg)) throw invalid(`the DPoP proof jwk does not fit its alg ${alg}`);
  const key = await importPublicJwk(publicJwk, alg);
  if (key === undefined) throw invalid('the DPoP proof jwk is not a valid key');

  let payload: Uint8Array;
  try {
    payload = (await compactVerify(proof, key, { algorithms: [alg] })).payload;
  } catch (error) {
    if (!(error instanceof joseErrors.JOSEError)) throw error;
    throw invalid('the DPoP proof signature does not verify with its jwk');
  }
  let claims: Record<string, unknown>;
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new TypeError('not an object');
    claims = value as Record<string, unknown>;
  } catch {
    throw invalid('the DPoP proof payload is not a JSON object');
  }

  const { jti, htm, htu, iat, ath, nonce } = claims;
  if (!stringClaim(jti, MAX_JTI))
    throw invalid(`the DPoP proof must have a jti of at most ${MAX_JTI} characters`);
  if (!stringClaim(htm, 20)) throw invalid('the DPoP proof must have htm, the request method');
  if (!stringClaim(htu, MAX_CLAIM)) throw invalid('the DPoP proof must have htu, the request URL');
  if (typeof iat !== 'number' || !Number.isFinite(iat))
    throw invalid('the DPoP proof must have iat (NumericDate)');
  if (htm !== request.method)
    throw invalid(`the DPoP proof htm must be ${request.method}, the method of this request`);
  const expected = normalizeHtu(request.url);
  if (expected === undefined || normalizeHtu(htu) !== expected) {
    throw invalid(`the DPoP proof htu must be ${expected ?? 'the URL of this request'}`);
  }

  if (options.nonces !== undefined) {
    const current = await options.nonces.current();
    if (typeof nonce !== 'string' || !(await options.nonces.check(nonce))) {
      throw dpopError(
        options,
        'use_dpop_nonce',
        'the DPoP proof must carry the nonce of the DPoP-Nonce header',
        current,
      );
    }
  }
  const now = nowSeconds(options.clock ?? Date.now);
  if (Math.abs(now - iat) > window) {
    throw invalid(`the DPoP proof iat must be within ${window} seconds of the server's time`);
  }
  if (request.accessToken !== undefined) {
    if (typeof ath !== 'string') throw invalid('the DPoP proof must have ath, the hash of the access token');
    if (ath !== (await accessTokenHash(request.accessToken))) {
      throw invalid('the DPoP proof ath does not match the access token');
    }
  }

  const jkt = await jwkThumbprint(publicJwk);
  const recorded = await options.replayStore.checkAndStore(
    await replayKey('dpop', [jkt, jti]),
    Math.floor(iat + window) + 1,
    now,
  );
  if (!recorded)
    throw invalid('the DPoP proof was already used: make a new proof (new jti) for every request');
  return { jkt, jwk: publicJwk, alg, jti, issuedAt: iat };
}
