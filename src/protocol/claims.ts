/**
 * Which identity claims each OpenID Connect scope releases (OIDC Core §5.4), shared by the UserInfo
 * endpoint and the discovery document's `claims_supported`.
 * @module
 */

/** Claims released by each scope (OIDC Core §5.4). `openid` releases `sub` only. */
export const CLAIMS_BY_SCOPE: Readonly<Record<string, readonly string[]>> = Object.freeze({
  profile: [
    'name',
    'family_name',
    'given_name',
    'middle_name',
    'nickname',
    'preferred_username',
    'profile',
    'picture',
    'website',
    'gender',
    'birthdate',
    'zoneinfo',
    'locale',
    'updated_at',
  ],
  email: ['email', 'email_verified'],
});

/** Every claim this server can release, for `claims_supported` (OIDC Discovery §3). */
export const SUPPORTED_CLAIMS: readonly string[] = Object.freeze([
  'sub',
  'iss',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  ...Object.values(CLAIMS_BY_SCOPE).flat(),
]);
