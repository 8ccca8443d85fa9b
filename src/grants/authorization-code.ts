/**
 * The `authorization_code` grant (RFC 6749 §4.1.3, RFC 7636 §4.5/§4.6), as a recipe:
 * 1. read the code (one this server issued is remembered, `recently-issued.ts`) and check every
 *    binding WITHOUT consuming it (a wrong verifier must not burn
 *    the code, ATK-03); a consumed code is a replay: revoke what it issued (TOK-13), also after
 *    its expiry, for as long as its tombstone lasts;
 * 2. mint everything the response carries (access token, refresh token, ID token);
 * 3. the commit point: redeem the code, which consumes it and stores the grant with its tokens in
 *    one atomic step; of concurrent redemptions one wins, the others are replays; a redemption that
 *    committed with its answer lost is recognised by the access token it stored (`lost-answer.ts`);
 * 4. best-effort bookkeeping that cannot fail the response.
 * @module
 */
import { sha256 } from '../core/crypto.js';
import { OAuthError } from '../core/errors.js';
import type { Params } from '../core/params.js';
import { verifyCodeVerifier } from '../protocol/pkce.js';
import { narrowResources } from '../protocol/resource.js';
import type { ServerContext } from '../server-context.js';
import type { AuthorizationCodeRecord, ClientRecord, GrantRecord } from '../storage/types.js';
import { mintAccessToken } from '../tokens/access-token.js';
import { mintIdToken } from '../tokens/id-token.js';
import { mintRefreshToken } from '../tokens/refresh-token.js';
import { markClientUsed } from './client-use.js';
import { recoverLostAnswer } from './lost-answer.js';
import { type DpopBinding, refreshBindingOf, type TokenResponse, tokenTypeOf } from './token-response.js';

const MAX_CODE_LENGTH = 512;

const invalidCode = () =>
  new OAuthError('invalid_grant', 'the authorization code is invalid, expired, or was already used');

/** A second use of a code revokes what the first one issued (RFC 6749 §4.1.2), then fails. */
async function replayed(ctx: ServerContext, client: ClientRecord, grantId: string): Promise<never> {
  await ctx.config.storage.grants.revoke(grantId, ctx.now());
  ctx.emit({ type: 'code.replayed', clientId: client.clientId, grantId });
  ctx.emit({ type: 'grant.revoked', grantId, reason: 'code_replay' });
  throw new OAuthError(
    'invalid_grant',
    'the authorization code was already used; the tokens issued with it are revoked',
  );
}

/** Step 1: the code, if this client may redeem it with this request. */
async function checkedCode(
  ctx: ServerContext,
  client: ClientRecord,
  params: Params,
  codeHash: string,
  verifier: string,
): Promise<AuthorizationCodeRecord> {
  // A code this server issued is known without a read: whether it was used or expired since, the
  // redemption in step 3 decides again, atomically (recently-issued.ts).
  const record =
    ctx.recentlyIssued.codes.take(codeHash, ctx.now()) ??
    (await ctx.config.storage.codes.get(codeHash, ctx.now()));
  if (record === null || record.clientId !== client.clientId) throw invalidCode();
  const redirectUri = params.get('redirect_uri');
  if (
    record.redirectUriSent
      ? redirectUri !== record.redirectUri
      : redirectUri !== undefined && redirectUri !== record.redirectUri
  ) {
    throw new OAuthError('invalid_grant', 'redirect_uri differs from the one of the authorization request');
  }
  await verifyCodeVerifier(verifier, record.codeChallenge);
  return record;
}

/**
 * Exchanges an authorization code for tokens.
 *
 * @param ctx - the server's shared state
 * @param client - the authenticated client
 * @param params - the token request's parameters
 * @param dpopJkt - the thumbprint of the request's verified DPoP proof: the access token (and a
 *   public client's refresh token) is bound to it (RFC 9449 §5, §6)
 * @returns the token response: access token, refresh token (clients registered for the grant),
 *   ID token (`openid` in scope)
 * @throws OAuthError `invalid_request`, `invalid_grant` (unknown, expired, other client's, replayed
 *   code; wrong `redirect_uri` or `code_verifier`), `invalid_target`; a storage failure propagates
 *   (answered 5xx) and leaves the code redeemable
 * @see RFC 6749 §4.1.3, §10.5; RFC 7636 §4.6; RFC 8707 §2.2; OIDC Core §3.1.3.3
 */
export async function authorizationCodeGrant(
  ctx: ServerContext,
  client: ClientRecord,
  params: Params,
  dpopJkt: DpopBinding,
): Promise<TokenResponse> {
  const code = params.get('code');
  if (code === undefined) throw new OAuthError('invalid_request', 'code is required');
  const verifier = params.get('code_verifier');
  if (verifier === undefined)
    throw new OAuthError('invalid_request', 'code_verifier is required (RFC 7636 §4.5)');
  if (code.length > MAX_CODE_LENGTH) throw invalidCode();

  const codeHash = await sha256(code);
  const record = await checkedCode(ctx, client, params, codeHash, verifier);
  const audience = narrowResources(record.resources, params.getAll('resource'));
  if (record.consumedAt !== undefined) return replayed(ctx, client, record.grantId);

  // Step 2: mint. Nothing is stored yet, so a failure here leaves the code unused for a retry.
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
    dpopJkt,
  });
  const publicClient = client.metadata.token_endpoint_auth_method === 'none';
  const refresh = client.metadata.grant_types.includes('refresh_token')
    ? await mintRefreshToken(ctx, grant, refreshBindingOf(publicClient, dpopJkt))
    : undefined;
  const idToken = grant.scope.includes('openid')
    ? await mintIdToken(ctx, {
        client,
        userId: grant.userId,
        authTime: grant.authTime,
        nonce: record.nonce,
        accessTokenHash: access.record.tokenHash,
      })
    : undefined;

  // Step 3: the commit point.
  const redeemed = await recoverLostAnswer(
    ctx,
    () =>
      ctx.config.storage.codes.redeem({
        codeHash,
        grant,
        accessToken: access.record,
        ...(refresh === undefined ? {} : { refreshToken: refresh.record }),
        now,
      }),
    access.record.tokenHash,
    { outcome: 'redeemed' } as const,
  );
  if (redeemed.outcome === 'replayed') return replayed(ctx, client, redeemed.grantId);
  if (redeemed.outcome === 'invalid') throw invalidCode(); // expired since it was read
  // Its first refresh needs no read (recently-issued.ts).
  if (refresh !== undefined)
    ctx.recentlyIssued.refreshTokens.remember(refresh.record.tokenHash, refresh.record);

  // Step 4: nothing below can fail the response.
  await markClientUsed(ctx, client);
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
    token_type: tokenTypeOf(dpopJkt),
    expires_in: access.expiresIn,
    scope: grant.scope.join(' '),
    ...(refresh === undefined ? {} : { refresh_token: refresh.token }),
    ...(idToken === undefined ? {} : { id_token: idToken }),
  };
}
