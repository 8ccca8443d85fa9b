/**
 * Token revocation (RFC 7009): the owning client revokes an access token, or a refresh token and
 * with it the whole grant. Unknown tokens answer 200; another client's token is never revoked.
 * @module
 */
import { OAuthError } from '../core/errors.js';
import { methodNotAllowed, NO_STORE, type OAuthRequest, type OAuthResponse } from '../core/http.js';
import { parseFormBody } from '../core/params.js';
import { enforceRateLimit } from '../core/rate-limit.js';
import { authenticateClient } from '../protocol/client-auth.js';
import type { ServerContext } from '../server-context.js';
import { tokenKey } from '../tokens/token-key.js';

const OK: OAuthResponse = { status: 200, headers: { ...NO_STORE } };

/**
 * `POST {revocation_endpoint}`.
 *
 * @throws OAuthError `invalid_request` (no token), `invalid_client`, `unauthorized_client` (the token
 * belongs to another client: nothing is revoked), `too_many_requests`
 * @see RFC 7009 §2.1, §2.2
 */
export async function handleRevoke(ctx: ServerContext, request: OAuthRequest): Promise<OAuthResponse> {
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const { config } = ctx;
  await enforceRateLimit(config.rateLimiter, 'revoke', config.clientIp(request));
  const params = parseFormBody(request);
  const repeated = params.repeated();
  if (repeated.length > 0)
    throw new OAuthError('invalid_request', `the '${repeated[0]}' parameter was given more than once`);
  const client = await authenticateClient(ctx, request, params);
  const token = params.get('token');
  if (token === undefined) throw new OAuthError('invalid_request', 'token is required');
  if (token.length > 8192) return OK;

  const hash = await tokenKey(token);
  const now = ctx.now();
  // The hint only orders the lookups (RFC 7009 §2.1): a wrong or unknown hint still finds the token.
  const refreshFirst = params.get('token_type_hint') === 'refresh_token';
  const findAccess = async () => {
    const record = await config.storage.grants.getAccessToken(hash, now);
    return record === null ? null : ({ kind: 'access_token', record } as const);
  };
  const findRefresh = async () => {
    const record = await config.storage.grants.getRefreshToken(hash, now);
    return record === null ? null : ({ kind: 'refresh_token', record } as const);
  };
  const found = refreshFirst
    ? ((await findRefresh()) ?? (await findAccess()))
    : ((await findAccess()) ?? (await findRefresh()));
  if (found === null) return OK;
  if (found.record.clientId !== client.clientId) {
    throw new OAuthError('unauthorized_client', 'the token was issued to another client');
  }
  if (found.kind === 'access_token') {
    await config.storage.grants.revokeAccessToken(hash, now);
  } else {
    await config.storage.grants.revoke(found.record.grantId, now);
    ctx.emit({ type: 'grant.revoked', grantId: found.record.grantId, reason: 'revocation' });
  }
  ctx.emit({
    type: 'token.revoked',
    clientId: client.clientId,
    kind: found.kind,
    grantId: found.record.grantId,
  });
  return OK;
}
