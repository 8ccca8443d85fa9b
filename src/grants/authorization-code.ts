/**
 * The `authorization_code` grant (RFC 6749 §4.1.3, RFC 7636 §4.5/§4.6): check every binding of the
 * code WITHOUT consuming it (a wrong verifier must not burn the code, ATK-03), then create the grant
 * under the id allocated with the code, which succeeds exactly once (the atomic step), mark the
 * code consumed, and revoke everything on a replay.
 * @module
 */
import { sha256 } from '../core/crypto.js';
import { OAuthError } from '../core/errors.js';
import type { Params } from '../core/params.js';
import { verifyCodeVerifier } from '../protocol/pkce.js';
import { narrowResources } from '../protocol/resource.js';
import type { ServerContext } from '../server-context.js';
import type { ClientRecord, GrantRecord } from '../storage/types.js';
import { mintAccessToken } from '../tokens/access-token.js';
import { mintIdToken } from '../tokens/id-token.js';
import { mintRefreshToken } from '../tokens/refresh-token.js';
import type { TokenResponse } from './token-response.js';

const MAX_CODE_LENGTH = 512;

const invalidCode = () =>
  new OAuthError('invalid_grant', 'the authorization code is invalid, expired, or was already used');

/** Exchanges an authorization code for tokens. */
export async function authorizationCodeGrant(
  ctx: ServerContext,
  client: ClientRecord,
  params: Params,
): Promise<TokenResponse> {
  const { storage } = ctx.config;
  const code = params.get('code');
  if (code === undefined) throw new OAuthError('invalid_request', 'code is required');
  const verifier = params.get('code_verifier');
  if (verifier === undefined)
    throw new OAuthError('invalid_request', 'code_verifier is required (RFC 7636 §4.5)');
  if (code.length > MAX_CODE_LENGTH) throw invalidCode();

  const codeHash = await sha256(code);
  const record = await storage.getAuthorizationCode(codeHash, ctx.now());
  if (record === null) throw invalidCode();
  if (record.clientId !== client.clientId) throw invalidCode();
  const redirectUri = params.get('redirect_uri');
  if (
    record.redirectUriSent
      ? redirectUri !== record.redirectUri
      : redirectUri !== undefined && redirectUri !== record.redirectUri
  ) {
    throw new OAuthError('invalid_grant', 'redirect_uri differs from the one of the authorization request');
  }
  await verifyCodeVerifier(verifier, record.codeChallenge);
  const audience = narrowResources(record.resources, params.getAll('resource'));

  const replayed = async (): Promise<never> => {
    // RFC 6749 §4.1.2: a second use revokes what the first one issued.
    await storage.revokeGrant(record.grantId, ctx.now());
    ctx.emit({ type: 'code.replayed', clientId: client.clientId, grantId: record.grantId });
    ctx.emit({ type: 'grant.revoked', grantId: record.grantId, reason: 'code_replay' });
    throw new OAuthError(
      'invalid_grant',
      'the authorization code was already used; the tokens issued with it are revoked',
    );
  };
  if (record.consumedAt !== undefined) return replayed();

  const now = ctx.now();
  const grant: GrantRecord = {
    grantId: record.grantId,
    clientId: client.clientId,
    userId: record.userId,
    scope: record.scope,
    resources: record.resources,
    authTime: record.authTime,
    createdAt: now,
    expiresAt: now + ctx.config.tokens.grantTtlSeconds,
  };
  const access = await mintAccessToken(ctx, {
    grantId: grant.grantId,
    clientId: client.clientId,
    userId: grant.userId,
    scope: grant.scope,
    audience,
    authTime: grant.authTime,
  });
  const refresh = client.metadata.grant_types.includes('refresh_token')
    ? await mintRefreshToken(ctx, grant)
    : undefined;
  const created = await storage.createGrant({
    grant,
    accessToken: access.record,
    ...(refresh === undefined ? {} : { refreshToken: refresh.record }),
  });
  // The grant id was allocated with the code, so of concurrent redemptions exactly one creates the
  // grant; the others are replays (ATK-02) and revoke what the winner received (TOK-13).
  if (!created) return replayed();
  await storage.consumeAuthorizationCode(codeHash, ctx.now());

  if (client.expiresAt !== undefined) {
    // The client has been used: it no longer expires as an abandoned registration.
    const { expiresAt: _unused, ...kept } = client;
    await storage.updateClient(kept);
    ctx.forgetClient(client.clientId);
  }
  const idToken = grant.scope.includes('openid')
    ? await mintIdToken(ctx, {
        client,
        userId: grant.userId,
        authTime: grant.authTime,
        nonce: record.nonce,
        accessTokenHash: access.record.tokenHash,
      })
    : undefined;
  ctx.emit({
    type: 'token.issued',
    clientId: client.clientId,
    userId: grant.userId,
    grantId: grant.grantId,
    jti: access.record.jti,
    grantType: 'authorization_code',
    scope: grant.scope,
  });
  return {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
    scope: grant.scope.join(' '),
    ...(refresh === undefined ? {} : { refresh_token: refresh.token }),
    ...(idToken === undefined ? {} : { id_token: idToken }),
  };
}
