/**
 * `private_key_jwt` client authentication: a JWT the client signs with its private key and sends
 * as `client_assertion` with `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer`,
 * at the token, revocation and introspection endpoints.
 *
 * Steps: read the parameters (one method only, bounded size, compact JWS shape) → the claimed
 * client (`sub`, equal to `iss` and to `client_id` when sent) → the client's keys → header (`alg`
 * allowed, `typ` absent, `JWT` or `client-authentication+jwt`, no `crit`) → signature (by `kid`, or
 * a few keys of the right type; one rate-limited refetch of `jwks_uri` when none verifies) → claims
 * → `jti` recorded as used until the assertion expires (last, so only valid assertions are stored).
 *
 * Audience (draft-ietf-oauth-rfc7523bis, the 2025 answer to audience injection): the issuer
 * identifier is the audience clients should use. An assertion typed `client-authentication+jwt`
 * must carry the issuer as its only audience. An untyped one (every client written before the
 * draft) must contain the issuer or one of `endpointAudiences` (the endpoint URLs, as OIDC Core §9
 * and RFC 7523 §3 allowed); set `endpointAudiences: []` to accept the issuer alone.
 *
 * Time: `exp` is required and at most `maxLifetimeSeconds` (300) after `iat` and after now; `iat`
 * and `nbf` may not be in the future; every comparison allows `clockToleranceSeconds` (30) of skew.
 * @see RFC 7521 §4.2, RFC 7523 §2.2 and §3, OpenID Connect Core §9, draft-ietf-oauth-rfc7523bis
 * @module
 */
import { compactVerify, decodeJwt, decodeProtectedHeader, errors as joseErrors } from 'jose';
import { type Clock, nowSeconds } from '../core/context.js';
import { OAuthError } from '../core/errors.js';
import type { ClientKeyLookup } from './client-keys.js';
import {
  importPublicJwk,
  isSignatureAlgorithm,
  keyVerifies,
  type PublicJwk,
  SIGNATURE_ALGORITHMS,
  type SignatureAlgorithm,
} from './public-jwk.js';
import { type ReplayStore, replayKey } from './replay-store.js';

/** The `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2). */
export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** Defaults of {@link ClientAssertionOptions}. */
export const CLIENT_ASSERTION_DEFAULTS = Object.freeze({
  maxLifetimeSeconds: 300,
  clockToleranceSeconds: 30,
  maxBytes: 8192,
  maxKeyTrials: 3,
});

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const MAX_CLIENT_ID = 2000;
const MAX_JTI = 256;
const MAX_AUDIENCES = 10;
const TYPED = 'client-authentication+jwt';

function invalidClient(description: string, cause?: unknown): OAuthError {
  return new OAuthError('invalid_client', description, cause === undefined ? {} : { cause });
}

/**
 * A client assertion as read from a request, before anything is verified.
 *
 * @example
 * ```ts
 * declare const presented: PresentedClientAssertion;
 * console.log(presented.clientId); // the claimed client: load it, then verify
 * ```
 * @see RFC 7523 §2.2
 */
export interface PresentedClientAssertion {
  /** The client the assertion claims to be from (`sub`, equal to `iss` and to `client_id` when sent). */
  readonly clientId: string;
  /** The compact JWS. */
  readonly assertion: string;
}

/** The request parameters {@link readClientAssertion} reads. */
export interface AssertionParams {
  /** The single value of a parameter, or `undefined`. */
  get(name: string): string | undefined;
}

/**
 * Reads `client_assertion_type` and `client_assertion` from a request's parameters. Returns
 * `undefined` when neither is present (the client uses another method). The claimed client id is
 * read from the unverified payload, to find the client and its keys; nothing is trusted yet.
 *
 * @param params - the request parameters (form body)
 * @param hasBasicCredentials - whether the request also carries `Authorization: Basic`
 * @param maxBytes - the longest assertion accepted; default 8192
 * @returns the claimed client and the assertion, or `undefined`
 * @throws OAuthError `invalid_request` when the assertion comes with a `client_secret` or Basic
 * credentials (one method per request, RFC 6749 §2.3) or without its type; `invalid_client` for an
 * unknown assertion type, an oversized or malformed assertion, `iss` ≠ `sub`, or a `client_id`
 * parameter that differs from them
 * @see RFC 7521 §4.2, RFC 7523 §2.2 and §3, RFC 6749 §2.3
 * @example
 * ```ts
 * const presented = readClientAssertion(params, false);
 * if (presented !== undefined) console.log(presented.clientId);
 * ```
 */
export function readClientAssertion(
  params: AssertionParams,
  hasBasicCredentials: boolean,
  maxBytes: number = CLIENT_ASSERTION_DEFAULTS.maxBytes,
): PresentedClientAssertion | undefined {
  const type = params.get('client_assertion_type');
  const assertion = params.get('client_assertion');
  if (type === undefined && assertion === undefined) return undefined;
  if (hasBasicCredentials || params.get('client_secret') !== undefined) {
    throw new OAuthError(
      'invalid_request',
      'use one client authentication method: a client_assertion or a secret',
    );
  }
  if (assertion === undefined) throw new OAuthError('invalid_request', 'client_assertion is missing');
  if (type === undefined) throw new OAuthError('invalid_request', 'client_assertion_type is missing');
  if (type !== JWT_BEARER_ASSERTION_TYPE) {
    throw invalidClient(`client_assertion_type must be ${JWT_BEARER_ASSERTION_TYPE}`);
  }
  if (assertion.length > maxBytes)
    throw invalidClient(`the client_assertion is longer than ${maxBytes} bytes`);
  if (!COMPACT_JWS.test(assertion))
    throw invalidClient('the client_assertion is not a signed JWT (compact JWS)');
  let claims: Record<string, unknown>;
  try {
    claims = decodeJwt(assertion);
  } catch (error) {
    throw invalidClient('the client_assertion payload is not a JSON object', error);
  }
  const { iss, sub } = claims;
  if (typeof sub !== 'string' || sub === '' || sub.length > MAX_CLIENT_ID) {
    throw invalidClient('the client_assertion must have the client_id as sub');
  }
  if (iss !== sub) throw invalidClient('the client_assertion must have iss equal to sub (the client_id)');
  const clientId = params.get('client_id');
  if (clientId !== undefined && clientId !== sub) {
    throw invalidClient('the client_id parameter differs from the client_assertion sub');
  }
  return { clientId: sub, assertion };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Options of {@link verifyClientAssertion}.
 *
 * @example
 * ```ts
 * const options: ClientAssertionOptions = {
 *   issuer: 'https://auth.example.com',
 *   endpointAudiences: ['https://auth.example.com/oauth/token'],
 *   replayStore: memoryReplayStore(),
 * };
 * ```
 * @see RFC 7523 §3, draft-ietf-oauth-rfc7523bis
 */
export interface ClientAssertionOptions {
  /** This server's issuer identifier: always an accepted audience, the only one for typed assertions. */
  readonly issuer: string;
  /** Further audiences accepted in untyped assertions: the endpoint URLs. Default none. */
  readonly endpointAudiences?: readonly string[];
  /** Where used `jti`s are recorded (shared by all instances). */
  readonly replayStore: ReplayStore;
  /** Accepted `alg`s (`token_endpoint_auth_signing_alg_values_supported`). Default: all supported. */
  readonly algorithms?: readonly SignatureAlgorithm[];
  /** Clock, epoch milliseconds. Default `Date.now`. */
  readonly clock?: Clock;
  /** Longest accepted lifetime (`exp` − `iat`, and `exp` − now), seconds. Default 300. */
  readonly maxLifetimeSeconds?: number;
  /** Clock skew allowed in every time comparison, seconds. Default 30. */
  readonly clockToleranceSeconds?: number;
  /** Keys tried when the assertion names no `kid`. Default 3. */
  readonly maxKeyTrials?: number;
}

/**
 * A verified client assertion.
 *
 * @example
 * ```ts
 * declare const verified: VerifiedClientAssertion;
 * console.log(verified.clientId, verified.alg, verified.kid);
 * ```
 * @see RFC 7523 §3
 */
export interface VerifiedClientAssertion {
  /** The authenticated client. */
  readonly clientId: string;
  /** The assertion's `jti`, now used up. */
  readonly jti: string;
  /** The assertion's `exp`, epoch seconds. */
  readonly expiresAt: number;
  /** The algorithm it was signed with. */
  readonly alg: SignatureAlgorithm;
  /** The `kid` of the key that verified it, when the key has one. */
  readonly kid: string | undefined;
}

/** Tries `candidates` on the assertion; the verified payload, or `undefined`. */
async function verifiedPayload(
  assertion: string,
  alg: SignatureAlgorithm,
  candidates: readonly PublicJwk[],
): Promise<{ payload: Uint8Array; key: PublicJwk } | undefined> {
  for (const jwk of candidates) {
    const key = await importPublicJwk(jwk, alg);
    if (key === undefined) continue;
    try {
      const result = await compactVerify(assertion, key, { algorithms: [alg] });
      return { payload: result.payload, key: jwk };
    } catch (error) {
      if (!(error instanceof joseErrors.JOSEError)) throw error;
    }
  }
  return undefined;
}

function candidatesOf(
  keys: readonly PublicJwk[],
  alg: SignatureAlgorithm,
  kid: string | undefined,
  tried: ReadonlySet<PublicJwk>,
  maxTrials: number,
): PublicJwk[] {
  const fitting = keys.filter(
    (k) => !tried.has(k) && keyVerifies(k, alg) && (kid === undefined || k.kid === kid),
  );
  return kid === undefined ? fitting.slice(0, maxTrials) : fitting;
}

function typProblem(typ: unknown): boolean {
  if (typ === undefined) return false;
  if (typeof typ !== 'string') return true;
  const t = typ.toLowerCase().replace(/^application\//, '');
  return t !== 'jwt' && t !== TYPED;
}

function isTyped(typ: unknown): boolean {
  return typeof typ === 'string' && typ.toLowerCase().replace(/^application\//, '') === TYPED;
}

function audienceProblem(aud: unknown, typed: boolean, options: ClientAssertionOptions): string | undefined {
  const list = typeof aud === 'string' ? [aud] : aud;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.length > MAX_AUDIENCES ||
    !list.every((a) => typeof a === 'string')
  ) {
    return 'the client_assertion must have an aud (a string, or an array of at most 10 strings)';
  }
  if (typed) {
    return list.length === 1 && list[0] === options.issuer
      ? undefined
      : `a client-authentication+jwt assertion must have this server's issuer identifier ${options.issuer} as its only aud`;
  }
  const accepted = [options.issuer, ...(options.endpointAudiences ?? [])];
  return list.some((a) => accepted.includes(a))
    ? undefined
    : `the client_assertion aud must contain this server's issuer identifier ${options.issuer}`;
}

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** The first time rule the claims break, or `undefined`. */
function timeProblem(
  claims: Record<string, unknown>,
  now: number,
  max: number,
  skew: number,
): string | undefined {
  const { exp, iat, nbf } = claims;
  if (!isTime(exp)) return 'the client_assertion must have an exp (NumericDate)';
  if (exp <= now - skew) return 'the client_assertion has expired';
  if (exp > now + max + skew) return `the client_assertion must expire within ${max} seconds`;
  if (iat !== undefined) {
    if (!isTime(iat)) return 'the client_assertion iat must be a NumericDate';
    if (iat > now + skew) return 'the client_assertion iat is in the future';
    if (exp - iat > max) return `the client_assertion lifetime (exp - iat) must be at most ${max} seconds`;
  }
  if (nbf !== undefined) {
    if (!isTime(nbf)) return 'the client_assertion nbf must be a NumericDate';
    if (nbf > now + skew) return 'the client_assertion is not valid yet (nbf)';
  }
  return undefined;
}

/**
 * Verifies a client assertion read by {@link readClientAssertion} against the claimed client's
 * keys, and uses up its `jti`.
 *
 * @param presented - the assertion and the client it claims to be from (already loaded by the caller)
 * @param keys - the client's keys ({@link ClientKeyResolver.lookup}); asked once more, with
 * `refresh: true`, when no key verifies; returning the very same array means "nothing new", and
 * at most `maxKeyTrials` keys are tried per set when the assertion names no `kid`
 * @param options - issuer, accepted audiences and algorithms, replay store, time rules
 * @returns the authenticated client and what the assertion said
 * @throws OAuthError `invalid_client` (400) for every failure: header, signature, claims, replay;
 * the description says what is wrong with the assertion, never which keys the client has
 * @throws OAuthError `temporarily_unavailable` when the replay store is full (memory store)
 * @see RFC 7523 §3, RFC 7521 §4.2, OpenID Connect Core §9, draft-ietf-oauth-rfc7523bis
 * @example
 * ```ts
 * declare const params: { get(name: string): string | undefined };
 * declare const resolver: ClientKeyResolver;
 * const presented = readClientAssertion(params, false);
 * if (presented !== undefined) {
 *   const lookup = resolver.lookup({ clientId: presented.clientId, jwksUri: 'https://agent.example.com/jwks.json' });
 *   const verified = await verifyClientAssertion(presented, lookup, {
 *     issuer: 'https://auth.example.com',
 *     replayStore: memoryReplayStore(),
 *   });
 *   console.log(verified.clientId);
 * }
 * ```
 */
export async function verifyClientAssertion(
  presented: PresentedClientAssertion,
  keys: ClientKeyLookup,
  options: ClientAssertionOptions,
): Promise<VerifiedClientAssertion> {
  const algorithms = options.algorithms ?? SIGNATURE_ALGORITHMS;
  const max = options.maxLifetimeSeconds ?? CLIENT_ASSERTION_DEFAULTS.maxLifetimeSeconds;
  const skew = options.clockToleranceSeconds ?? CLIENT_ASSERTION_DEFAULTS.clockToleranceSeconds;
  const maxTrials = options.maxKeyTrials ?? CLIENT_ASSERTION_DEFAULTS.maxKeyTrials;
  const { assertion, clientId } = presented;

  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(assertion) as Record<string, unknown>;
  } catch (error) {
    throw invalidClient('the client_assertion header is not a JSON object', error);
  }
  const { alg, kid, typ } = header;
  if (!isSignatureAlgorithm(alg) || !algorithms.includes(alg)) {
    throw invalidClient(`the client_assertion alg must be one of ${algorithms.join(', ')}`);
  }
  if (kid !== undefined && (typeof kid !== 'string' || kid === '')) {
    throw invalidClient('the client_assertion kid must be a non-empty string');
  }
  if (typProblem(typ)) throw invalidClient(`the client_assertion typ must be absent, JWT or ${TYPED}`);
  if (header.crit !== undefined) throw invalidClient('the client_assertion must not have a crit header');

  // Signature: the named key, or a few keys of the right type; then one (rate-limited) refetch.
  const tried = new Set<PublicJwk>();
  let verified: { payload: Uint8Array; key: PublicJwk } | undefined;
  let previous: readonly PublicJwk[] | undefined;
  for (const refresh of [false, true]) {
    const set = await keys(refresh);
    // The same set again means no refetch happened: nothing new to try.
    if (set === previous) break;
    previous = set;
    const candidates = candidatesOf(set, alg, kid, tried, maxTrials);
    verified = await verifiedPayload(assertion, alg, candidates);
    if (verified !== undefined) break;
    for (const candidate of candidates) tried.add(candidate);
  }
  if (verified === undefined) {
    throw invalidClient("the client_assertion signature does not verify with the client's registered keys");
  }

  let claims: Record<string, unknown>;
  try {
    const value: unknown = JSON.parse(utf8.decode(verified.payload));
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new TypeError('not an object');
    claims = value as Record<string, unknown>;
  } catch (error) {
    throw invalidClient('the client_assertion payload is not a JSON object', error);
  }
  if (claims.iss !== clientId || claims.sub !== clientId) {
    throw invalidClient('the client_assertion must have the client_id as iss and sub');
  }
  const audience = audienceProblem(claims.aud, isTyped(typ), options);
  if (audience !== undefined) throw invalidClient(audience);
  const now = nowSeconds(options.clock ?? Date.now);
  const time = timeProblem(claims, now, max, skew);
  if (time !== undefined) throw invalidClient(time);
  const { jti } = claims;
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI) {
    throw invalidClient(
      `the client_assertion must have a jti (a unique string of at most ${MAX_JTI} characters)`,
    );
  }
  const exp = claims.exp as number;

  const key = await replayKey('pkj', [clientId, jti]);
  if (!(await options.replayStore.checkAndStore(key, Math.ceil(exp) + skew, now))) {
    throw invalidClient('the client_assertion was already used: send a new jti with every assertion');
  }
  return { clientId, jti, expiresAt: exp, alg, kid: verified.key.kid };
}
