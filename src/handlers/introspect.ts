/**
 * Token introspection (RFC 7662). Callers authenticate: a confidential client sees its own tokens; a
 * resource server declared in options sees access tokens whose audience includes its resources.
 * Anything else (expired, revoked, unknown, not the caller's) is `{"active": false}` and nothing more.
 * @module
 */
import { sha256, timingSafeEqual } from '../core/crypto.js';
import { isOAuthError, OAuthError } from '../core/errors.js';
import {
  jsonResponse,
  methodNotAllowed,
  NO_STORE,
  type OAuthRequest,
  type OAuthResponse,
} from '../core/http.js';
import type { Params } from '../core/params.js';
import { parseFormBody } from '../core/params.js';
import { assertWithinRateLimit, enforceRateLimit } from '../core/rate-limit.js';
import {
  authenticateClient,
  authenticationFailureKey,
  hasClientAssertion,
  presentedCredentials,
} from '../protocol/client-auth.js';
import type { ServerContext } from '../server-context.js';
import { tokenKey } from '../tokens/token-key.js';

const INACTIVE = Object.freeze({ active: false });

/** Who is asking: a client (its own tokens) or a resource server (tokens for its resources). */
type Caller =
  | { readonly kind: 'client'; readonly clientId: string }
  | { readonly kind: 'resource_server'; readonly clientId: string; readonly resources: readonly string[] };

function unauthorized(ctx: ServerContext, description: string): OAuthError {
  // RFC 7662 §2.1 requires authentication; a 401 must carry a challenge (RFC 9110 §15.5.2).
  return new OAuthError('invalid_client', description, {
    status: 401,
    headers: { 'www-authenticate': `Basic realm="${ctx.config.issuer}", charset="UTF-8"` },
  });
}

async function authenticateCaller(
  ctx: ServerContext,
  request: OAuthRequest,
  params: Params,
): Promise<Caller> {
  const assertion = hasClientAssertion(params);
  if (request.headers.authorization === undefined && params.get('client_id') === undefined && !assertion) {
    throw unauthorized(ctx, 'introspection requires client authentication');
  }
  if (assertion) return authenticatedClient(ctx, request, params);
  const presented = presentedCredentials(ctx, request, params);
  const configured = ctx.config.introspection.callers.find((c) => c.clientId === presented.clientId);
  if (configured !== undefined) {
    // A caller's secret is configured, so a person chose it: failures lock out, per address.
    const lockoutKey = authenticationFailureKey(ctx, request, presented.clientId);
    await assertWithinRateLimit(ctx.config.rateLimiter, 'client_auth_failure', lockoutKey);
    const hash = await sha256(presented.secret ?? '');
    if (!timingSafeEqual(hash, configured.secretHash)) {
      ctx.emit({ type: 'client_authentication.failed', clientId: presented.clientId });
      await enforceRateLimit(ctx.config.rateLimiter, 'client_auth_failure', lockoutKey);
      throw unauthorized(ctx, 'client authentication failed');
    }
    return { kind: 'resource_server', clientId: configured.clientId, resources: configured.resources };
  }
  if (presented.secret === undefined) throw unauthorized(ctx, 'introspection requires client authentication');
  return authenticatedClient(ctx, request, params);
}

/** A client introspecting its own tokens (a secret or a client assertion); any failure is a 401. */
async function authenticatedClient(
  ctx: ServerContext,
  request: OAuthRequest,
  params: Params,
): Promise<Caller> {
  try {
    const client = await authenticateClient(ctx, request, params);
    return { kind: 'client', clientId: client.clientId };
  } catch (error) {
    if (isOAuthError(error) && error.code === 'invalid_client')
      throw unauthorized(ctx, 'client authentication failed');
    throw error;
  }
}

/**
 * `POST {introspection_endpoint}`.
 *
 * @throws OAuthError 401 `invalid_client` for unauthenticated callers, `invalid_request`, `too_many_requests`
 * @see RFC 7662 §2.1, §2.2, §4
 */
export async function handleIntrospect(ctx: ServerContext, request: OAuthRequest): Promise<OAuthResponse> {
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const { config } = ctx;
  const ip = config.clientIp(request);
  await enforceRateLimit(config.rateLimiter, 'introspect', ip === undefined ? undefined : `ip:${ip}`);
  const params = parseFormBody(request);
  const repeated = params.repeated();
  if (repeated.length > 0)
    throw new OAuthError('invalid_request', `the '${repeated[0]}' parameter was given more than once`);
  const caller = await authenticateCaller(ctx, request, params);
  await enforceRateLimit(config.rateLimiter, 'introspect', `caller:${caller.clientId}`);
  const token = params.get('token');
  if (token === undefined) throw new OAuthError('invalid_request', 'token is required');
  if (token.length > 8192) return jsonResponse(200, INACTIVE, NO_STORE);

  const hash = await tokenKey(token);
  const now = ctx.now();
  const access = await config.storage.grants.getAccessToken(hash, now);
  if (access !== null) {
    const visible =
      caller.kind === 'client'
        ? access.clientId === caller.clientId
        : access.audience.some((aud) => caller.resources.includes(aud));
    if (!visible) return jsonResponse(200, INACTIVE, NO_STORE);
    return jsonResponse(
      200,
      {
        active: true,
        scope: access.scope.join(' '),
        client_id: access.clientId,
        sub: access.userId,
        aud: access.audience.length === 1 ? access.audience[0] : access.audience,
        iss: config.issuer,
        exp: access.expiresAt,
        iat: access.issuedAt,
        jti: access.jti,
        // RFC 9449 §6.2: a bound token says so, and names its key.
        token_type: access.dpopJkt === undefined ? 'Bearer' : 'DPoP',
        ...(access.dpopJkt === undefined ? {} : { cnf: { jkt: access.dpopJkt } }),
      },
      NO_STORE,
    );
  }
  // Refresh tokens are visible to their own client only, and only while still usable.
  if (caller.kind === 'client') {
    const refresh = await config.storage.grants.getRefreshToken(hash, now);
    if (refresh !== null && refresh.rotatedAt === undefined && refresh.clientId === caller.clientId) {
      return jsonResponse(
        200,
        {
          active: true,
          scope: refresh.scope.join(' '),
          client_id: refresh.clientId,
          sub: refresh.userId,
          aud: refresh.resources.length === 1 ? refresh.resources[0] : refresh.resources,
          iss: config.issuer,
          exp: refresh.expiresAt,
          iat: refresh.issuedAt,
          token_type: 'refresh_token',
        },
        NO_STORE,
      );
    }
  }
  return jsonResponse(200, INACTIVE, NO_STORE);
}
