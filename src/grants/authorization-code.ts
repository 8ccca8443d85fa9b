/**
 * The `authorization_code` grant (RFC 6749 §4.1.3, RFC 7636 §4.5/§4.6), as a recipe:
 * 1. read the code and check every binding WITHOUT consuming it (a wrong verifier must not burn
 *    the code, ATK-03);
 * 2. decide what a code that is already consumed means: a retry of the same exchange after its
 *    response was lost, within the grace window, is answered with the SAME response (sealed at
 *    redemption); anything else is a replay: revoke what the code issued (TOK-13), also after its
 *    expiry, for as long as its tombstone lasts;
 * 3. mint everything the response carries (access token, refresh token, ID token), and seal it;
 * 4. the commit point: redeem the code, which consumes it (keeping the sealed response) and stores
 *    the grant with its tokens in one atomic step; of concurrent redemptions one wins, the others
 *    are replays;
 * 5. best-effort bookkeeping that cannot fail the response.
 *
 * Why a retry may get the tokens and a replay revokes them. Only a holder of the code AND its
 * verifier reaches step 2: the client, which alone knows the verifier (RFC 7636 §1; it travels only
 * in the token request). A presentation without it, or by another client, or with another
 * `redirect_uri`, is refused in step 1 and revokes nothing, as for an unused code: a thief of the
 * code alone can neither redeem it nor get the grant revoked. A verifier holder presenting a
 * consumed code is then either the client retrying because it never got its response (a storage
 * failure after the commit, FLT-02), or a duplicate of a redemption still in flight, or someone who
 * saw the token request itself. The sealed response serves only the first: the same request
 * (client, `redirect_uri`, verifier, `resource`s, DPoP key), from `STORAGE_RETRY_AFTER_SECONDS`
 * (the `Retry-After` the client was told to wait) to `codeGraceSeconds` after the redemption, on a
 * grant not revoked since. Sooner it is concurrent with the redemption (ATK-02: exactly one
 * answer), later or different it is a replay. It issues nothing new: the same tokens, which the
 * seal (keyed by the code and verifier) keeps unreadable to storage. What the window gives up is
 * this: someone who reads a token request (code and verifier) within seconds of it, and whom
 * TLS does not stop, gets the client's tokens (bound to the client's DPoP key if it used one)
 * instead of having them revoked; the refresh grace window makes the same trade.
 * @module
 */
import { sha256 } from '../core/crypto.js';
import { OAuthError } from '../core/errors.js';
import type { Params } from '../core/params.js';
import { verifyCodeVerifier } from '../protocol/pkce.js';
import { narrowResources } from '../protocol/resource.js';
import type { ServerContext } from '../server-context.js';
import type { AuthorizationCodeRecord, ClientRecord, GrantRecord } from '../storage/types.js';
import { STORAGE_RETRY_AFTER_SECONDS } from '../storage/unavailable.js';
import { mintAccessToken } from '../tokens/access-token.js';
import { mintIdToken } from '../tokens/id-token.js';
import { mintRefreshToken } from '../tokens/refresh-token.js';
import { markClientUsed } from './client-use.js';
import {
  type DpopBinding,
  openTokenResponse,
  refreshBindingOf,
  sealTokenResponse,
  type TokenResponse,
  tokenTypeOf,
} from './token-response.js';

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

/** What makes a retry the same exchange as the redemption, besides the checks of step 1. */
interface Exchange {
  readonly code: string;
  readonly verifier: string;
  readonly audience: readonly string[];
  readonly dpopJkt: DpopBinding;
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((value) => b.includes(value));

/**
 * Step 2: the response to answer a retry with, or `undefined` when presenting the consumed code
 * again is a replay (see the module comment for why). The response is the one sealed at
 * redemption, with `expires_in` counting down from then.
 *
 * @throws OAuthError `invalid_grant` for a retry whose grant was revoked or has expired since:
 *   its tokens are dead, and there is nothing left to revoke
 */
async function retryResponse(
  ctx: ServerContext,
  record: AuthorizationCodeRecord & { readonly consumedAt: number },
  exchange: Exchange,
): Promise<TokenResponse | undefined> {
  const grace = ctx.config.tokens.codeGraceSeconds;
  const now = ctx.now();
  const elapsed = now - record.consumedAt;
  if (grace <= 0 || elapsed < STORAGE_RETRY_AFTER_SECONDS || elapsed >= grace) return undefined;
  if (record.sealedResponse === undefined) return undefined;
  const sealed = await openTokenResponse(exchange.code, exchange.verifier, record.sealedResponse);
  if (
    sealed === undefined ||
    sealed.dpopJkt !== exchange.dpopJkt ||
    !sameSet(sealed.audience, exchange.audience)
  ) {
    return undefined;
  }
  const grant = await ctx.config.storage.grants.get(record.grantId);
  if (grant === null || grant.revokedAt !== undefined || grant.expiresAt <= now) throw invalidCode();
  ctx.config.runtime.logger.info('a code exchange retried after its response was lost got that response', {
    clientId: record.clientId,
    grantId: record.grantId,
  });
  return { ...sealed.response, expires_in: Math.max(0, sealed.response.expires_in - elapsed) };
}

/** Step 1: the code, if this client may redeem it with this request. */
async function checkedCode(
  ctx: ServerContext,
  client: ClientRecord,
  params: Params,
  codeHash: string,
  verifier: string,
): Promise<AuthorizationCodeRecord> {
  const record = await ctx.config.storage.codes.get(codeHash, ctx.now());
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
 *   ID token (`openid` in scope); for a retry within `codeGraceSeconds`, the redemption's response
 * @throws OAuthError `invalid_request`, `invalid_grant` (unknown, expired, other client's, replayed
 *   code; wrong `redirect_uri` or `code_verifier`), `invalid_target`; a storage failure propagates
 *   (answered 5xx) and leaves the code redeemable, or, when it struck after the commit, the
 *   response retrievable by a retry within `codeGraceSeconds`
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
  const exchange: Exchange = { code, verifier, audience, dpopJkt };

  // Step 2, when the code is known to be consumed already.
  if (record.consumedAt !== undefined) {
    const retry = await retryResponse(ctx, { ...record, consumedAt: record.consumedAt }, exchange);
    if (retry === undefined) return replayed(ctx, client, record.grantId);
    await markClientUsed(ctx, client);
    return retry;
  }

  // Step 3: mint. Nothing is stored yet, so a failure here leaves the code unused for a retry.
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

  const response: TokenResponse = {
    access_token: access.token,
    token_type: tokenTypeOf(dpopJkt),
    expires_in: access.expiresIn,
    scope: grant.scope.join(' '),
    ...(refresh === undefined ? {} : { refresh_token: refresh.token }),
    ...(idToken === undefined ? {} : { id_token: idToken }),
  };
  // Sealed whenever the retry window is on, so that a retry can get this very response.
  const sealedResponse =
    ctx.config.tokens.codeGraceSeconds > 0
      ? await sealTokenResponse(ctx, code, verifier, {
          response,
          audience,
          ...(dpopJkt === undefined ? {} : { dpopJkt }),
        })
      : undefined;

  // Step 4: the commit point.
  const redeemed = await ctx.config.storage.codes.redeem({
    codeHash,
    grant,
    accessToken: access.record,
    ...(refresh === undefined ? {} : { refreshToken: refresh.record }),
    ...(sealedResponse === undefined ? {} : { sealedResponse }),
    now,
  });
  // A concurrent redemption won: this request is a duplicate of one still answering (ATK-02).
  if (redeemed.outcome === 'replayed') return replayed(ctx, client, redeemed.grantId);
  if (redeemed.outcome === 'invalid') throw invalidCode(); // expired since it was read

  // Step 5: nothing below can fail the response.
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
  return response;
}
