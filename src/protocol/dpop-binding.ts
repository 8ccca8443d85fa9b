/**
 * Tokens bound to a DPoP key (`cnf.jkt`): reading the `Authorization: DPoP` / `Bearer` credential
 * at a resource, refusing a bound token presented as a bearer token or with another key's proof,
 * and, at the token endpoint, a client that must use DPoP and a refresh token bound to a key.
 * @see RFC 9449 §5, §5.2, §6, §7.1, §7.2
 * @module
 */
import { OAuthError } from '../core/errors.js';
import type { VerifiedDpopProof } from './dpop.js';
import { dpopChallenge } from './dpop.js';
import type { SignatureAlgorithm } from './public-jwk.js';

// RFC 6750 §2.1 / RFC 9449 §7.1: token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;
const MAX_TOKEN_LENGTH = 8192;

/**
 * The access token of a request and the scheme it came with.
 *
 * @example
 * ```ts
 * import type { AccessTokenCredential } from 'portcullis';
 *
 * const credential: AccessTokenCredential = { scheme: 'DPoP', token: 'Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU' };
 * ```
 * @see RFC 9449 §7.1, RFC 6750 §2.1
 * @group DPoP (RFC 9449)
 */
export interface AccessTokenCredential {
  /** `Bearer` (RFC 6750) or `DPoP` (RFC 9449), whatever case it was sent in. */
  readonly scheme: 'Bearer' | 'DPoP';
  /** The access token. */
  readonly token: string;
}

/**
 * The challenges a resource sends with a refusal, so the client learns which schemes work.
 *
 * @example
 * ```ts
 * import type { ResourceChallenges } from 'portcullis';
 *
 * const challenges: ResourceChallenges = {
 *   algs: ['ES256', 'EdDSA'],
 *   params: { resource_metadata: 'https://api.example.com/.well-known/oauth-protected-resource' },
 *   bearer: true,
 * };
 * ```
 * @see RFC 9449 §7.1, §7.2; RFC 9728 §5.1
 * @group DPoP (RFC 9449)
 */
export interface ResourceChallenges {
  /** `dpop_signing_alg_values_supported`. */
  readonly algs: readonly SignatureAlgorithm[];
  /** Parameters of every challenge (`resource_metadata`, `scope`, `realm`). */
  readonly params?: Readonly<Record<string, string | undefined>>;
  /** Whether the resource also accepts unbound tokens with the Bearer scheme (then a `Bearer` challenge is sent too). */
  readonly bearer: boolean;
}

/** Quotes a challenge parameter (values restricted to the RFC 6749 charset; `"` and `\` removed). */
function bearerChallenge(params: Readonly<Record<string, string | undefined>>): string {
  const parts = Object.entries(params)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `${name}="${value.replace(/["\\]/g, '')}"`);
  return parts.length === 0 ? 'Bearer' : `Bearer ${parts.join(', ')}`;
}

/**
 * The `WWW-Authenticate` value of a refusal at a resource: a Bearer challenge when bearer tokens are
 * accepted, then a DPoP challenge with `algs`. The error goes into the challenge of the scheme the
 * client used (RFC 9449 §7.2). Bearer comes first (RFC 9449 §7.1 leaves the order open) because
 * clients written before DPoP read the first challenge only.
 *
 * @param challenges - the accepted schemes and the common parameters
 * @param error - the error and its description, and the scheme the client used
 * @returns the header value
 * @see RFC 9449 §7.1, §7.2; RFC 6750 §3
 * @example
 * ```ts
 * import { resourceChallenge } from 'portcullis';
 *
 * resourceChallenge({ algs: ['ES256'], bearer: true });
 * // 'Bearer, DPoP algs="ES256"'
 * ```
 * @group DPoP (RFC 9449)
 */
export function resourceChallenge(
  challenges: ResourceChallenges,
  error?: {
    readonly code: string;
    readonly description?: string | undefined;
    readonly scheme: 'Bearer' | 'DPoP';
  },
): string {
  const params = challenges.params ?? {};
  const errorParams = error === undefined ? {} : { error: error.code, error_description: error.description };
  // The error first, as RFC 6750 §3 writes it (and as this library's Bearer challenges always were).
  const dpop = dpopChallenge(
    challenges.algs,
    error?.scheme === 'DPoP' ? { ...errorParams, ...params } : params,
  );
  if (!challenges.bearer) return dpop;
  const bearer = bearerChallenge(error?.scheme === 'Bearer' ? { ...errorParams, ...params } : params);
  return `${bearer}, ${dpop}`;
}

function refusal(
  challenges: ResourceChallenges,
  code: 'invalid_request' | 'invalid_token',
  description: string,
  scheme: 'Bearer' | 'DPoP',
): OAuthError {
  const cleaned = new OAuthError(code, description).description;
  return new OAuthError(code, description, {
    status: code === 'invalid_token' ? 401 : 400,
    headers: { 'www-authenticate': resourceChallenge(challenges, { code, description: cleaned, scheme }) },
  });
}

/**
 * Reads the access token of a request at a resource: `Authorization: DPoP <token>` or, when bearer
 * tokens are accepted, `Authorization: Bearer <token>`. `undefined` when there is no
 * `Authorization` header (the caller answers 401 with {@link resourceChallenge} and no error).
 *
 * @param authorization - the `Authorization` header (repeated headers joined with `, `)
 * @param challenges - the accepted schemes, for the challenge of a refusal
 * @returns the scheme and the token, or `undefined`
 * @throws OAuthError `invalid_request` (400) for two headers, an unknown or refused scheme, an empty
 * credential; `invalid_token` (401) for characters outside token68; both with `WWW-Authenticate`
 * @see RFC 9449 §7.1, §7.2; RFC 6750 §2.1, §3.1
 * @example
 * ```ts
 * import { readAccessTokenCredential } from 'portcullis';
 *
 * readAccessTokenCredential('DPoP abc.def', { algs: ['ES256'], bearer: false }); // { scheme: 'DPoP', token: 'abc.def' }
 * ```
 * @group DPoP (RFC 9449)
 */
export function readAccessTokenCredential(
  authorization: string | undefined,
  challenges: ResourceChallenges,
): AccessTokenCredential | undefined {
  if (authorization === undefined) return undefined;
  if (authorization.includes(',')) {
    throw refusal(challenges, 'invalid_request', 'the Authorization header was sent more than once', 'DPoP');
  }
  const trimmed = authorization.trim();
  const space = trimmed.indexOf(' ');
  const raw = (space === -1 ? trimmed : trimmed.slice(0, space)).toLowerCase();
  const scheme = raw === 'dpop' ? 'DPoP' : raw === 'bearer' && challenges.bearer ? 'Bearer' : undefined;
  if (scheme === undefined) {
    const allowed = challenges.bearer ? 'DPoP or Bearer' : 'DPoP';
    throw refusal(challenges, 'invalid_request', `use the ${allowed} authentication scheme`, 'DPoP');
  }
  const token = space === -1 ? '' : trimmed.slice(space + 1).replace(/^ +/, '');
  if (token === '') throw refusal(challenges, 'invalid_request', `the ${scheme} credential is empty`, scheme);
  if (token.length > MAX_TOKEN_LENGTH || !TOKEN68.test(token)) {
    throw refusal(challenges, 'invalid_token', 'the access token is malformed', scheme);
  }
  return { scheme, token };
}

/**
 * Checks that a valid access token was presented the way its binding requires: a token with
 * `cnf.jkt` only with the `DPoP` scheme and a proof by that very key; a token without a binding
 * only as a bearer token.
 *
 * @param credential - how the token was presented
 * @param tokenJkt - the token's `cnf.jkt`, or `undefined` for an unbound token
 * @param proof - the request's verified proof (with `ath` checked), required with the DPoP scheme
 * @param challenges - the accepted schemes, for the challenge of a refusal
 * @throws OAuthError `invalid_token` (401 with `WWW-Authenticate`) for a bound token sent as Bearer,
 * a proof by another key, an unbound token sent as DPoP
 * @see RFC 9449 §7.1, §7.2
 * @example
 * ```ts
 * import { checkAccessTokenBinding, type AccessTokenCredential, type VerifiedDpopProof } from 'portcullis';
 *
 * declare const credential: AccessTokenCredential;
 * declare const proof: VerifiedDpopProof | undefined;
 * declare const cnf: { jkt?: string } | undefined;
 * checkAccessTokenBinding(credential, cnf?.jkt, proof, { algs: ['ES256'], bearer: true });
 * ```
 * @group DPoP (RFC 9449)
 */
export function checkAccessTokenBinding(
  credential: AccessTokenCredential,
  tokenJkt: string | undefined,
  proof: VerifiedDpopProof | undefined,
  challenges: ResourceChallenges,
): void {
  if (credential.scheme === 'Bearer') {
    if (tokenJkt !== undefined) {
      throw refusal(
        challenges,
        'invalid_token',
        'this access token is bound to a key: present it with the DPoP scheme and a DPoP proof',
        'Bearer',
      );
    }
    return;
  }
  if (tokenJkt === undefined) {
    throw refusal(
      challenges,
      'invalid_token',
      'this access token is not bound to a key: use the Bearer scheme',
      'DPoP',
    );
  }
  if (proof === undefined || proof.jkt !== tokenJkt) {
    throw refusal(
      challenges,
      'invalid_token',
      'the DPoP proof was not made with the key this access token is bound to',
      'DPoP',
    );
  }
}

/**
 * At the token endpoint: refuses a request without a proof from a client registered with
 * `dpop_bound_access_tokens: true`.
 *
 * @param proof - the request's verified proof, or `undefined`
 * @param dpopBoundAccessTokens - the client's `dpop_bound_access_tokens` metadata
 * @throws OAuthError `invalid_dpop_proof` (400) when a proof is required and absent
 * @see RFC 9449 §5.2
 * @example
 * ```ts
 * requireDpopForClient(undefined, false); // fine: the tokens are bearer tokens
 * ```
 */
export function requireDpopForClient(
  proof: VerifiedDpopProof | undefined,
  dpopBoundAccessTokens: boolean | undefined,
): void {
  if (proof === undefined && dpopBoundAccessTokens === true) {
    throw new OAuthError('invalid_dpop_proof', 'this client must send a DPoP proof with every token request');
  }
}

/**
 * At the token endpoint, `grant_type=refresh_token`: a refresh token bound to a key (a public
 * client's, RFC 9449 §5) is accepted only with a proof by that key. Refusing never revokes the
 * grant: the presenter may be a thief, and the legitimate client keeps working.
 *
 * @param refreshJkt - the refresh token's bound `jkt`, or `undefined` when it is not bound
 * @param proof - the request's verified proof, or `undefined`
 * @throws OAuthError `invalid_dpop_proof` (400) for a bound refresh token without a proof;
 * `invalid_grant` (400) for a proof by another key
 * @see RFC 9449 §5, §5.0 (refresh tokens of public clients)
 * @example
 * ```ts
 * declare const proof: VerifiedDpopProof | undefined;
 * checkRefreshTokenBinding('0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I', proof);
 * ```
 */
export function checkRefreshTokenBinding(
  refreshJkt: string | undefined,
  proof: VerifiedDpopProof | undefined,
): void {
  if (refreshJkt === undefined) return;
  if (proof === undefined) {
    throw new OAuthError(
      'invalid_dpop_proof',
      'this refresh token is bound to a DPoP key: send a DPoP proof by that key',
    );
  }
  if (proof.jkt !== refreshJkt) {
    throw new OAuthError('invalid_grant', 'this refresh token is bound to another DPoP key');
  }
}
