/**
 * The successful token response body (RFC 6749 §5.1, OIDC Core §3.1.3.3).
 * @module
 */

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
