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
import { verifyDpopProof } from '../protocol/dpop.js';
import {
  checkAccessTokenBinding,
  type ResourceChallenges,
  readAccessTokenCredential,
  resourceChallenge,
} from '../protocol/dpop-binding.js';
import { dpopProofOptions } from '../protocol/dpop-request.js';
import type { VerifiedAccessToken } from '../resource-server/verifier.js';
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
 * A DPoP-bound token at UserInfo: `Authorization: DPoP <token>` with a proof of this request
 * (method, the UserInfo URL, `ath`) by the token's key (RFC 9449 §7.1).
 */
async function dpopBoundToken(ctx: ServerContext, request: OAuthRequest): Promise<VerifiedAccessToken> {
  const challenges: ResourceChallenges = { algs: ctx.config.dpop.algorithms, bearer: true };
  const credential = readAccessTokenCredential(request.headers.authorization, challenges)!;
  const token = await ctx.verifier.verify(credential.token);
  if (token === null) {
    const description = 'the access token is invalid, expired or revoked';
    throw new OAuthError('invalid_token', description, {
      headers: {
        'www-authenticate': resourceChallenge(challenges, {
          code: 'invalid_token',
          description,
          scheme: 'DPoP',
        }),
      },
    });
  }
  const proof =
    token.dpopJkt === undefined
      ? undefined
      : await verifyDpopProof(
          {
            dpop: request.headers.dpop,
            method: request.method,
            url: ctx.config.urls.userinfo,
            accessToken: credential.token,
          },
          { ...dpopProofOptions(ctx, 'resource'), otherChallenges: ['Bearer'] },
        );
  checkAccessTokenBinding(credential, token.dpopJkt, proof, challenges);
  return token;
}

/**
 * `GET` / `POST {userinfo_endpoint}`. Bearer tokens, and DPoP-bound tokens with the `DPoP` scheme
 * and a proof (RFC 9449 §7).
 *
 * @throws OAuthError 401 with a bare `WWW-Authenticate: Bearer` without a token; 401 `invalid_token`
 * (also for a token whose audience is not this server, and a DPoP-bound token sent as Bearer);
 * 401 `invalid_dpop_proof` / `use_dpop_nonce` for a DPoP proof that fails;
 * 403 `insufficient_scope` without `openid`; 400 `invalid_request` for two credentials
 * @see OIDC Core §5.3, RFC 6750 §3, RFC 9449 §7.1
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
  const dpopScheme = ctx.config.dpop.enabled && /^\s*dpop /i.test(request.headers.authorization ?? '');
  if (dpopScheme && bodyToken !== undefined) {
    throw bearerError(
      'invalid_request',
      'the access token was sent both in the Authorization header and in the body',
    );
  }
  const token = dpopScheme ? await dpopBoundToken(ctx, request) : await bearerToken(ctx, request, bodyToken);
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

/** A bearer token, from the header or the form body (RFC 6750 §2.1, §2.2); a bound token is refused. */
async function bearerToken(
  ctx: ServerContext,
  request: OAuthRequest,
  bodyToken: string | undefined,
): Promise<VerifiedAccessToken> {
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
  if (token.dpopJkt !== undefined) {
    throw bearerError(
      'invalid_token',
      'this access token is bound to a key: present it with the DPoP scheme and a DPoP proof',
    );
  }
  return token;
}
