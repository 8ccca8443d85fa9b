/**
 * The successful token response body (RFC 6749 §5.1, OIDC Core §3.1.3.3).
 * @module
 */

/** What the token endpoint returns on success. */
export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  /** Always present: the granted scope, which may differ from the requested one. */
  readonly scope: string;
  readonly refresh_token?: string;
  readonly id_token?: string;
}
