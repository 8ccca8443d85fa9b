/**
 * DPoP at this server's own endpoints (token endpoint, UserInfo): the proof of a request checked
 * with the configured algorithms, `iat` window, nonces and replay store, and the `DPoP-Nonce`
 * header that hands out a fresh nonce when nonces are on.
 * @see RFC 9449 §4.3, §5, §8
 * @module
 */
import type { OAuthRequest } from '../core/http.js';
import type { ServerContext } from '../server-context.js';
import { type DpopProofOptions, type VerifiedDpopProof, verifyDpopProof } from './dpop.js';

/**
 * The options {@link verifyDpopProof} gets at this server, for the authorization server's
 * endpoints or for a resource (`server.guard`).
 *
 * @param ctx - the server's shared state
 * @param at - where the proof is checked (decides the errors' status and headers)
 * @returns the proof options
 */
export function dpopProofOptions(
  ctx: ServerContext,
  at: DpopProofOptions['at'],
): Omit<DpopProofOptions, 'challenge' | 'otherChallenges'> {
  const { dpop, runtime } = ctx.config;
  return {
    at,
    replayStore: ctx.replayStore,
    algorithms: dpop.algorithms,
    iatWindowSeconds: dpop.iatWindowSeconds,
    nonces: dpop.nonces,
    clock: runtime.clock,
  };
}

/**
 * The verified proof of a request to one of this server's endpoints, or `undefined` when it sends
 * no `DPoP` header or DPoP is off (the header is then ignored, RFC 9449 §5).
 *
 * @param ctx - the server's shared state
 * @param request - the request
 * @param url - the endpoint's absolute URL as clients know it (from the issuer, never from the
 *   request's Host header)
 * @param accessToken - the access token presented with the proof (UserInfo): `ath` is then checked
 * @returns the proof, its `jti` now used up
 * @throws OAuthError `invalid_dpop_proof` or `use_dpop_nonce` (400, with `DPoP-Nonce`)
 * @see RFC 9449 §4.3, §5, §8
 */
export async function requestDpopProof(
  ctx: ServerContext,
  request: OAuthRequest,
  url: string,
  accessToken?: string,
): Promise<VerifiedDpopProof | undefined> {
  if (!ctx.config.dpop.enabled || request.headers.dpop === undefined) return undefined;
  return verifyDpopProof(
    { dpop: request.headers.dpop, method: request.method, url, accessToken },
    dpopProofOptions(ctx, 'authorization_server'),
  );
}

/**
 * A `DPoP-Nonce` header with the current nonce when nonces are on, for every response of an
 * endpoint that reads proofs, so clients always hold a fresh one (RFC 9449 §8.2).
 *
 * @param ctx - the server's shared state
 * @returns `{ 'dpop-nonce': nonce }`, or an empty record
 */
export async function dpopNonceHeader(ctx: ServerContext): Promise<Record<string, string>> {
  const { dpop } = ctx.config;
  if (!dpop.enabled || dpop.nonces === undefined) return {};
  return { 'dpop-nonce': await dpop.nonces.current() };
}
