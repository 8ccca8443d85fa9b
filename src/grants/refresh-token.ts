/**
 * The `refresh_token` grant (RFC 6749 §6, OAuth 2.1 §4.3), as a recipe:
 * 1. read the presented token (rotated or not; one this server issued is remembered, see
 *    `recently-issued.ts`) and check the request against it: same client,
 *    a proof by the DPoP key it is bound to (a public client's, RFC 9449 §5), scope and resources
 *    that only narrow;
 * 2. decide what a token that is already rotated means: within the grace window, and sealed for
 *    this very token, a retry (answered with the SAME successor); anything else is reuse, which
 *    revokes the grant (RFC 9700 §4.14.2);
 * 3. mint everything the response carries (access token, successor, ID token);
 * 4. the commit point: rotate atomically (or, for a retry, store the new access token); a rotation
 *    that finds the token already rotated by a concurrent request goes back to step 2; one that
 *    committed with its answer lost is recognised by the access token it stored (`lost-answer.ts`).
 * @module
 */
import { OAuthError } from '../core/errors.js';
import type { Params } from '../core/params.js';
import type { VerifiedDpopProof } from '../protocol/dpop.js';
import { checkRefreshTokenBinding } from '../protocol/dpop-binding.js';
import { narrowResources } from '../protocol/resource.js';
import { parseScope } from '../protocol/scope.js';
import type { ServerContext } from '../server-context.js';
import type { ClientRecord, RefreshTokenRecord } from '../storage/types.js';
import { type MintedAccessToken, mintAccessToken } from '../tokens/access-token.js';
import { mintIdToken } from '../tokens/id-token.js';
import { mintRefreshToken, openSuccessor, sealSuccessor } from '../tokens/refresh-token.js';
import { tokenKey } from '../tokens/token-key.js';
import { markClientUsed } from './client-use.js';
import { recoverLostAnswer } from './lost-answer.js';
import { refreshBindingOf, type TokenResponse, tokenTypeOf } from './token-response.js';

const invalidToken = () =>
  new OAuthError('invalid_grant', 'the refresh token is invalid, expired, or revoked');

/** The facts of a rotation, as the presented token or the atomic step reports them. */
interface Rotation {
  readonly grantId: string;
  readonly rotatedAt: number;
  readonly sealedSuccessor?: string | undefined;
}

/**
 * Step 2: the successor to answer a retry with, or `undefined` when presenting the token again is
 * reuse. A retry is the same token, from the same client (checked before), within
 * `refreshGraceSeconds` of its rotation; the successor is recovered from its sealed copy, which
 * opens only with the presented token.
 */
async function retrySuccessor(ctx: ServerContext, presented: string, rotation: Rotation) {
  const grace = ctx.config.tokens.refreshGraceSeconds;
  if (grace <= 0 || ctx.now() - rotation.rotatedAt >= grace) return undefined;
  if (rotation.sealedSuccessor === undefined) return undefined;
  return openSuccessor(presented, rotation.sealedSuccessor);
}

/** Reuse of a rotated token: the whole grant is revoked (RFC 9700 §4.14.2). */
async function reused(ctx: ServerContext, client: ClientRecord, grantId: string): Promise<never> {
  await ctx.config.storage.grants.revoke(grantId, ctx.now());
  ctx.emit({ type: 'refresh.reuse_detected', clientId: client.clientId, grantId });
  ctx.emit({ type: 'grant.revoked', grantId, reason: 'refresh_reuse' });
  throw new OAuthError('invalid_grant', 'the refresh token was already used; the grant has been revoked');
}

/** Step 4 of a retry: the new access token joins the grant, if the grant is still active. */
async function answerRetry(ctx: ServerContext, access: MintedAccessToken, successor: string) {
  if (!(await ctx.config.storage.grants.addAccessToken(access.record, ctx.now()))) throw invalidToken();
  return successor;
}

/**
 * Exchanges a refresh token for a new access token and a new refresh token (the same successor
 * for a retry within `refreshGraceSeconds`).
 *
 * @param ctx - the server's shared state
 * @param client - the authenticated client
 * @param params - the token request's parameters
 * @param proof - the request's verified DPoP proof: the new access token is bound to its key, and a
 *   bound refresh token is accepted only with it (RFC 9449 §5)
 * @returns the token response, with an ID token when `idTokenOnRefresh` is on and `openid` in scope
 * @throws OAuthError `invalid_request`, `invalid_grant` (unknown, expired, revoked, other client's,
 *   or reused token: reuse revokes the grant), `invalid_scope`, `invalid_target`; a storage failure
 *   propagates (answered 5xx) and leaves the token usable for a retry
 * @see RFC 6749 §6; OAuth 2.1 §4.3; RFC 9700 §4.14.2; OIDC Core §12.2
 */
export async function refreshTokenGrant(
  ctx: ServerContext,
  client: ClientRecord,
  params: Params,
  proof: VerifiedDpopProof | undefined,
): Promise<TokenResponse> {
  const { storage, tokens } = ctx.config;
  const presented = params.get('refresh_token');
  if (presented === undefined) throw new OAuthError('invalid_request', 'refresh_token is required');
  if (presented.length > 512) throw invalidToken();
  const tokenHash = await tokenKey(presented);

  // Step 1. A token this server issued is known without a read: what storage would add (rotated,
  // revoked, expired since) the rotation in step 4 decides again, atomically.
  const old: RefreshTokenRecord | null =
    ctx.recentlyIssued.refreshTokens.take(tokenHash, ctx.now()) ??
    (await storage.grants.getRefreshToken(tokenHash, ctx.now()));
  if (old === null) throw invalidToken();
  if (old.clientId !== client.clientId) {
    // Another client holding a token that was already rotated: it leaked. An active one is only
    // refused, and its client keeps it (RT-04).
    if (old.rotatedAt !== undefined) return reused(ctx, client, old.grantId);
    throw invalidToken();
  }
  // A bound token without its key's proof is refused before anything else, and revokes nothing:
  // the presenter may be a thief, and the client keeps its grant (RFC 9449 §5).
  checkRefreshTokenBinding(old.dpopJkt, proof);
  const requestedScope = parseScope(params.get('scope'));
  const scope = requestedScope.length === 0 ? old.scope : requestedScope;
  for (const s of scope) {
    if (!old.scope.includes(s))
      throw new OAuthError('invalid_scope', `scope '${s}' was not part of the original grant`);
  }
  const audience = narrowResources(old.resources, params.getAll('resource'));

  // Step 2, when the token is known to be rotated already.
  let retryWith: string | undefined;
  if (old.rotatedAt !== undefined) {
    retryWith = await retrySuccessor(ctx, presented, { ...old, rotatedAt: old.rotatedAt });
    if (retryWith === undefined) return reused(ctx, client, old.grantId);
  }

  // Step 3: mint. Nothing is stored yet, so a failure here leaves the token usable for a retry.
  const access = await mintAccessToken(ctx, {
    grantId: old.grantId,
    clientId: client.clientId,
    userId: old.userId,
    scope,
    audience,
    dpopJkt: proof?.jkt,
  });
  const idToken =
    tokens.idTokenOnRefresh && scope.includes('openid')
      ? await mintIdToken(ctx, {
          client,
          userId: old.userId,
          authTime: old.authTime,
          accessTokenHash: access.record.tokenHash,
        })
      : undefined;

  // Step 4: the commit point.
  let refreshToken: string;
  if (retryWith !== undefined) {
    refreshToken = await answerRetry(ctx, access, retryWith);
  } else {
    // The successor keeps the grant's full scope and resources (OAuth 2.1 §4.3.3).
    const { grantId, clientId, userId, scope: grantScope, resources, authTime } = old;
    // The successor keeps the binding; an unbound public client's token becomes bound to its first proof.
    const publicClient = client.metadata.token_endpoint_auth_method === 'none';
    const successor = await mintRefreshToken(
      ctx,
      { grantId, clientId, userId, scope: grantScope, resources, authTime },
      old.dpopJkt ?? refreshBindingOf(publicClient, proof?.jkt),
    );
    // Sealed whenever a grace window is configured, so that a retry can get this successor.
    const sealedSuccessor =
      tokens.refreshGraceSeconds > 0 ? await sealSuccessor(ctx, presented, successor.token) : undefined;
    const result = await recoverLostAnswer(
      ctx,
      () =>
        storage.grants.rotateRefreshToken({
          tokenHash,
          successor: successor.record,
          accessToken: access.record,
          ...(sealedSuccessor === undefined ? {} : { sealedSuccessor }),
          now: ctx.now(),
        }),
      access.record.tokenHash,
      { outcome: 'rotated' } as const,
    );
    if (result.outcome === 'invalid') throw invalidToken();
    if (result.outcome === 'rotated') {
      refreshToken = successor.token;
      ctx.recentlyIssued.refreshTokens.remember(successor.record.tokenHash, successor.record);
      ctx.emit({ type: 'refresh.rotated', clientId: client.clientId, grantId: old.grantId });
    } else {
      // A concurrent request with the same token rotated it first: step 2 again, on its facts.
      const same = await retrySuccessor(ctx, presented, result);
      if (same === undefined) return reused(ctx, client, result.grantId);
      refreshToken = await answerRetry(ctx, access, same);
    }
  }

  // Nothing below can fail the response.
  await markClientUsed(ctx, client);
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
    token_type: tokenTypeOf(proof?.jkt),
    expires_in: access.expiresIn,
    scope: scope.join(' '),
    refresh_token: refreshToken,
    ...(idToken === undefined ? {} : { id_token: idToken }),
  };
}
