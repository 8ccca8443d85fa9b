/**
 * The UserInfo endpoint (OIDC Core §5.3): a Bearer token with `openid` whose audience is this
 * server (the issuer, or a resource named in `userinfo.audiences`), claims from the host's `claims`
 * callback filtered by the granted scopes, `sub` always the token's. A token issued only for another
 * resource is refused: that resource server could otherwise replay it here and read the user's
 * claims (ABU-09; RFC 9700 §4.10).
 * @module
 */
import { OAuthError } from '../core/errors.js';
import {
  jsonResponse,
  methodNotAllowed,
  NO_STORE,
  type OAuthRequest,
  type OAuthResponse,
} from '../core/http.js';
import { parseFormBody } from '../core/params.js';
import { enforceRateLimit } from '../core/rate-limit.js';
import { bearerChallenge, readBearer } from '../protocol/bearer.js';
import { CLAIMS_BY_SCOPE } from '../protocol/claims.js';
import type { ServerContext } from '../server-context.js';

function bearerError(
  code: 'invalid_token' | 'insufficient_scope' | 'invalid_request',
  description: string,
  scope?: string,
) {
  return new OAuthError(code, description, {
    headers: { 'www-authenticate': bearerChallenge({ error: code, error_description: description, scope }) },
  });
}

/**
 * `GET` / `POST {userinfo_endpoint}`.
 *
 * @throws OAuthError 401 with a bare `WWW-Authenticate: Bearer` without a token; 401 `invalid_token`
 * (also for a token whose audience is not this server);
 * 403 `insufficient_scope` without `openid`; 400 `invalid_request` for two credentials
 * @see OIDC Core §5.3, RFC 6750 §3
 */
export async function handleUserinfo(ctx: ServerContext, request: OAuthRequest): Promise<OAuthResponse> {
  if (request.method !== 'GET' && request.method !== 'POST') throw methodNotAllowed(['GET', 'POST']);
  await enforceRateLimit(ctx.config.rateLimiter, 'userinfo', ctx.config.clientIp(request));
  let bodyToken: string | undefined;
  if (
    request.method === 'POST' &&
    request.body !== undefined &&
    request.headers['content-type'] !== undefined
  ) {
    bodyToken = parseFormBody(request).get('access_token');
  }
  let credential: ReturnType<typeof readBearer>;
  try {
    credential = readBearer(request.headers, bodyToken);
  } catch (error) {
    const e = error as OAuthError;
    throw bearerError(
      e.code === 'invalid_token' ? 'invalid_token' : 'invalid_request',
      e.description ?? e.code,
    );
  }
  if (!credential.present) {
    throw new OAuthError('invalid_token', 'an access token is required', {
      headers: { 'www-authenticate': 'Bearer' },
    });
  }
  const token = await ctx.verifier.verify(credential.token);
  if (token === null) throw bearerError('invalid_token', 'the access token is invalid, expired or revoked');
  if (!token.audience.some((aud) => ctx.config.userinfoAudiences.includes(aud))) {
    throw bearerError('invalid_token', 'the access token was issued for another resource, not for UserInfo');
  }
  if (!token.scope.includes('openid')) {
    throw bearerError('insufficient_scope', 'the access token was not granted the openid scope', 'openid');
  }
  const released = new Set<string>();
  for (const scope of token.scope) for (const claim of CLAIMS_BY_SCOPE[scope] ?? []) released.add(claim);
  const claims = released.size === 0 ? {} : ((await ctx.config.claims?.(token.subject, token.scope)) ?? {});
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(claims)) {
    if (released.has(name) && value !== undefined && value !== null) body[name] = value;
  }
  body.sub = token.subject;
  return jsonResponse(200, body, NO_STORE);
}
