/**
 * The `refresh_token` grant (RFC 6749 §6, OAuth 2.1 §4.3): rotation on every use, reuse detection
 * (a rotated-out token revokes the grant), scope and resource may only narrow, and an optional grace
 * period in which an identical retry gets the same successor.
 * @module
 */
import { sha256 } from '../core/crypto.js';
import { OAuthError } from '../core/errors.js';
import type { Params } from '../core/params.js';
import { narrowResources } from '../protocol/resource.js';
import { parseScope } from '../protocol/scope.js';
import type { ServerContext } from '../server-context.js';
import type { ClientRecord } from '../storage/types.js';
import { mintAccessToken } from '../tokens/access-token.js';
import { mintIdToken } from '../tokens/id-token.js';
import { mintRefreshToken, openSuccessor, sealSuccessor } from '../tokens/refresh-token.js';
import type { TokenResponse } from './token-response.js';

const invalidToken = () =>
  new OAuthError('invalid_grant', 'the refresh token is invalid, expired, or revoked');

/** Exchanges a refresh token for a new access token and a new refresh token. */
export async function refreshTokenGrant(
  ctx: ServerContext,
  client: ClientRecord,
  params: Params,
): Promise<TokenResponse> {
  const { storage, tokens } = ctx.config;
  const presented = params.get('refresh_token');
  if (presented === undefined) throw new OAuthError('invalid_request', 'refresh_token is required');
  if (presented.length > 512) throw invalidToken();
  const oldHash = await sha256(presented);
  const old = await storage.getRefreshToken(oldHash, ctx.now());
  if (old === null || old.clientId !== client.clientId) throw invalidToken();

  const requestedScope = parseScope(params.get('scope'));
  const scope = requestedScope.length === 0 ? old.scope : requestedScope;
  for (const s of scope) {
    if (!old.scope.includes(s))
      throw new OAuthError('invalid_scope', `scope '${s}' was not part of the original grant`);
  }
  const audience = narrowResources(old.resources, params.getAll('resource'));

  const access = await mintAccessToken(ctx, {
    grantId: old.grantId,
    clientId: client.clientId,
    userId: old.userId,
    scope,
    audience,
  });
  // The successor keeps the grant's full scope and resources (OAuth 2.1 §4.3.3).
  const successor = await mintRefreshToken(ctx, {
    grantId: old.grantId,
    clientId: old.clientId,
    userId: old.userId,
    scope: old.scope,
    resources: old.resources,
  });
  const grace = tokens.refreshGraceSeconds;
  const result = await storage.rotateRefreshToken(
    oldHash,
    {
      refreshToken: successor.record,
      accessToken: access.record,
      ...(grace > 0 ? { sealedSuccessor: await sealSuccessor(ctx, presented, successor.token) } : {}),
    },
    ctx.now(),
    grace,
  );

  let refreshToken: string;
  switch (result.outcome) {
    case 'rotated':
      refreshToken = successor.token;
      ctx.emit({ type: 'refresh.rotated', clientId: client.clientId, grantId: old.grantId });
      break;
    case 'grace': {
      const previous = result.previous.sealedSuccessor;
      const same = previous === undefined ? undefined : await openSuccessor(presented, previous);
      if (same === undefined || (await storage.getRefreshToken(await sha256(same), ctx.now())) === null) {
        throw invalidToken();
      }
      await storage.createAccessToken(access.record);
      refreshToken = same;
      break;
    }
    case 'reused':
      ctx.emit({ type: 'refresh.reuse_detected', clientId: client.clientId, grantId: result.grantId });
      ctx.emit({ type: 'grant.revoked', grantId: result.grantId, reason: 'refresh_reuse' });
      throw new OAuthError('invalid_grant', 'the refresh token was already used; the grant has been revoked');
    case 'invalid':
      throw invalidToken();
  }

  let idToken: string | undefined;
  if (tokens.idTokenOnRefresh && scope.includes('openid')) {
    const grant = await storage.getGrant(old.grantId);
    if (grant !== null) {
      idToken = await mintIdToken(ctx, {
        client,
        userId: old.userId,
        authTime: grant.authTime,
        accessTokenHash: access.record.tokenHash,
      });
    }
  }
  ctx.emit({
    type: 'token.issued',
    clientId: client.clientId,
    userId: old.userId,
    grantId: old.grantId,
    jti: access.record.jti,
    grantType: 'refresh_token',
    scope,
  });
  return {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
    scope: scope.join(' '),
    refresh_token: refreshToken,
    ...(idToken === undefined ? {} : { id_token: idToken }),
  };
}
