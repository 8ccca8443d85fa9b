/**
 * The `client_credentials` grant (RFC 6749 §4.4), offered when `clientCredentials.enabled`: a
 * confidential client (already authenticated: a secret or `private_key_jwt`) obtains an access
 * token for itself. As a recipe:
 * 1. the scope: what the client asks for (or the policy's defaults) within the ceiling the scope
 *    policy sets for it; never `openid` or `offline_access`, as there is no user;
 * 2. the resource: `resource` as at the authorization endpoint (RFC 8707), else the default one;
 * 3. mint the access token, whose `sub` is the client (RFC 9068 §2.2); no refresh token, no ID token;
 * 4. the commit point: the grant and its token stored in one atomic step, through the code
 *    aggregate's redemption of a code made for this request alone (so every storage adapter
 *    supports the grant without a new method);
 * 5. best-effort bookkeeping.
 * @see RFC 6749 §4.4, RFC 8707 §2, RFC 9068 §2.2; the MCP client-credentials extension; CC-01
 * @module
 */
import { randomToken, sha256, timeOrderedId } from '../core/crypto.js';
import { OAuthError } from '../core/errors.js';
import type { Params } from '../core/params.js';
import { clientCredentialsScope } from '../protocol/client-credentials.js';
import { resolveResources } from '../protocol/resource.js';
import { parseScope } from '../protocol/scope.js';
import type { ScopePolicy } from '../scopes/policy.js';
import type { ServerContext } from '../server-context.js';
import type { AuthorizationCodeRecord, ClientRecord, GrantRecord } from '../storage/types.js';
import { mintAccessToken } from '../tokens/access-token.js';
import { markClientUsed } from './client-use.js';
import { type DpopBinding, type TokenResponse, tokenTypeOf } from './token-response.js';

/** The policy's ceiling for `client`, or the client's registered `scope` when the policy has none. */
async function ceilingOf(policy: ScopePolicy, client: ClientRecord): Promise<readonly string[]> {
  if (policy.clientCredentialsScopes !== undefined) return policy.clientCredentialsScopes(client);
  return client.metadata.scope === undefined ? [] : client.metadata.scope.split(' ');
}

/**
 * Issues an access token to the client itself.
 *
 * @param ctx - the server's shared state
 * @param client - the authenticated, confidential client, registered for the grant
 * @param params - the token request's parameters
 * @param dpopJkt - the thumbprint of the request's verified DPoP proof: the access token is bound
 *   to that key (`cnf.jkt`, `token_type: DPoP`); `undefined` for a bearer token
 * @returns the token response: an access token, no refresh token
 * @throws OAuthError `invalid_scope`, `invalid_target`, `invalid_request`; a storage failure
 *   propagates (answered 5xx) and stores nothing
 * @see RFC 6749 §4.4.2, §4.4.3; RFC 8707 §2
 */
export async function clientCredentialsGrant(
  ctx: ServerContext,
  client: ClientRecord,
  params: Params,
  dpopJkt: DpopBinding = undefined,
): Promise<TokenResponse> {
  const { config } = ctx;
  const requested = params.get('scope');
  let asked: string[];
  try {
    asked = requested === undefined ? [] : parseScope(requested);
  } catch {
    throw new OAuthError('invalid_scope', 'scope must be space-separated scope tokens');
  }
  const ceiling = (await ceilingOf(config.scopePolicy, client)).filter(
    (s) => config.scopePolicy.describe(s) !== undefined,
  );
  const scope = clientCredentialsScope(asked, ceiling, config.scopePolicy.defaultScopes(client));
  const audience = resolveResources(config, params.getAll('resource'));

  const now = ctx.now();
  const grant: GrantRecord = {
    grantId: timeOrderedId(config.runtime.random, config.runtime.clock()),
    clientId: client.clientId,
    // RFC 9068 §2.2: with no resource owner, `sub` identifies the client.
    userId: client.clientId,
    scope,
    resources: audience,
    authTime: now,
    createdAt: now,
    // Nothing outlives the access token: no refresh token.
    expiresAt: now + config.tokens.accessTokenTtlSeconds,
  };
  const access = await mintAccessToken(ctx, {
    grantId: grant.grantId,
    clientId: client.clientId,
    userId: grant.userId,
    scope,
    audience,
    dpopJkt,
  });

  // The commit point: a code made for this request alone, created and redeemed at once.
  const codeHash = await sha256(randomToken(config.runtime.random, 32));
  const code: AuthorizationCodeRecord = {
    codeHash,
    grantId: grant.grantId,
    clientId: client.clientId,
    userId: grant.userId,
    redirectUri: '',
    redirectUriSent: false,
    codeChallenge: '',
    codeChallengeMethod: 'S256',
    scope,
    resources: audience,
    authTime: now,
    createdAt: now,
    expiresAt: now + 1,
  };
  await config.storage.codes.create(code);
  const redeemed = await config.storage.codes.redeem({ codeHash, grant, accessToken: access.record, now });
  if (redeemed.outcome !== 'redeemed') {
    throw new OAuthError('server_error', 'the client credentials grant could not be stored');
  }

  await markClientUsed(ctx, client);
  ctx.emit({
    type: 'token.issued',
    clientId: client.clientId,
    userId: grant.userId,
    grantId: grant.grantId,
    jti: access.record.jti,
    grantType: 'client_credentials',
    scope,
  });
  return {
    access_token: access.token,
    token_type: tokenTypeOf(dpopJkt),
    expires_in: access.expiresIn,
    scope: scope.join(' '),
  };
}
