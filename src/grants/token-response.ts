/**
 * The successful token response body (RFC 6749 §5.1, OIDC Core §3.1.3.3), and its sealed copy that
 * the authorization-code grant keeps with a redeemed code for a client that retries.
 * @module
 */
import type { ServerContext } from '../server-context.js';
import { openSuccessor, sealSuccessor } from '../tokens/refresh-token.js';

/** What the token endpoint returns on success. */
export interface TokenResponse {
  readonly access_token: string;
  /** `DPoP` for a token bound to the proof's key (RFC 9449 §5.1), else `Bearer`. */
  readonly token_type: 'Bearer' | 'DPoP';
  readonly expires_in: number;
  /** Always present: the granted scope, which may differ from the requested one. */
  readonly scope: string;
  readonly refresh_token?: string;
  readonly id_token?: string;
}

/**
 * The DPoP binding of a token request: the verified proof's key thumbprint, or `undefined` when
 * the request carried no proof (bearer tokens).
 */
export type DpopBinding = string | undefined;

/** The `token_type` of an access token with this binding. */
export function tokenTypeOf(dpopJkt: DpopBinding): 'Bearer' | 'DPoP' {
  return dpopJkt === undefined ? 'Bearer' : 'DPoP';
}

/**
 * The key a new refresh token is bound to: a public client's follows its proof (RFC 9449 §5); a
 * confidential client's refresh token is bound to its authentication instead, so stays unbound.
 */
export function refreshBindingOf(publicClient: boolean, dpopJkt: DpopBinding): DpopBinding {
  return publicClient ? dpopJkt : undefined;
}

/**
 * A token response as the authorization-code grant seals it at redemption, with what made the
 * request: a retry must be the same request to be answered with it.
 */
export interface SealedTokenResponse {
  readonly response: TokenResponse;
  /** The access token's audience, as the request's `resource` parameters narrowed it. */
  readonly audience: readonly string[];
  /** The DPoP key the tokens are bound to, absent for bearer tokens. */
  readonly dpopJkt?: string;
}

/**
 * The secret the seal of a code's response derives its key from: the code and its verifier, which
 * storage never holds (it keeps the code's hash and the challenge). The prefix keeps these keys
 * apart from the refresh grant's, which derive from a refresh token (base64url, never a NUL).
 */
const codeSecret = (code: string, verifier: string) => `authorization_code\u0000${code}\u0000${verifier}`;

/**
 * Seals a code's token response for a retry, with the refresh grant's AEAD (AES-256-GCM under a
 * key derived from a secret only the client holds).
 *
 * @param ctx - the server's shared state (its random source gives the nonce)
 * @param code - the authorization code presented
 * @param verifier - its PKCE `code_verifier`, checked against the code's challenge
 * @param sealed - the response and the request facts a retry must match
 * @returns an opaque string, for the code redemption's `sealedResponse`
 */
export function sealTokenResponse(
  ctx: ServerContext,
  code: string,
  verifier: string,
  sealed: SealedTokenResponse,
): Promise<string> {
  return sealSuccessor(ctx, codeSecret(code, verifier), JSON.stringify(sealed));
}

/**
 * Opens what {@link sealTokenResponse} sealed.
 *
 * @returns the response with its request facts, or `undefined` when it does not open with this
 *   code and verifier
 */
export async function openTokenResponse(
  code: string,
  verifier: string,
  sealed: string,
): Promise<SealedTokenResponse | undefined> {
  const plain = await openSuccessor(codeSecret(code, verifier), sealed);
  return plain === undefined ? undefined : (JSON.parse(plain) as SealedTokenResponse);
}
