/**
 * Client authentication at the token, revocation and introspection endpoints (RFC 6749 §2.3):
 * `none`, `client_secret_post`, `client_secret_basic` and `private_key_jwt` (RFC 7523 §2.2) where
 * enabled; one method per request (PKJ-04), and only the method the client registered. Secrets are compared as
 * SHA-256 digests in constant time; an unknown client and a wrong secret fail identically, after
 * the same work (one storage read, one digest, one comparison), so neither the answer nor its
 * timing tells whether a `client_id` exists.
 *
 * Failures lock out only where a person chose the secret (configured clients), and only the
 * address that failed: `client_auth_failure` is keyed by client and address. Generated secrets
 * carry 256 bits; guessing them is hopeless, and a lockout keyed by their public `client_id` would
 * only let strangers lock their owners out (ABU-01).
 * @module
 */
import { sha256, timingSafeEqual } from '../core/crypto.js';
import { OAuthError } from '../core/errors.js';
import { type OAuthRequest, singleCredentialHeader } from '../core/http.js';
import { type Params, refuseHostile } from '../core/params.js';
import { assertWithinRateLimit, enforceRateLimit } from '../core/rate-limit.js';
import type { ServerContext } from '../server-context.js';
import type { ClientRecord } from '../storage/types.js';
import { readClientAssertion, verifyClientAssertion } from './client-assertion.js';

/** How the client presented itself. */
export interface PresentedCredentials {
  readonly clientId: string;
  readonly secret: string | undefined;
  readonly method: 'none' | 'client_secret_post' | 'client_secret_basic';
}

// A digest no secret hashes to, compared when the client is unknown so both paths do the same work.
const NO_SECRET_HASH = 'A'.repeat(43);

function basicRealmError(ctx: ServerContext, description: string): OAuthError {
  return new OAuthError('invalid_client', description, {
    status: 401,
    headers: { 'www-authenticate': `Basic realm="${ctx.config.issuer}", charset="UTF-8"` },
  });
}

function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new OAuthError('invalid_request', 'the Basic credentials are not form-urlencoded UTF-8');
  }
}

/** Reads the credentials from the `Authorization: Basic` header and the body, refusing two at once. */
export function presentedCredentials(
  ctx: ServerContext,
  request: OAuthRequest,
  params: Params,
): PresentedCredentials {
  const header = singleCredentialHeader(request, 'authorization');
  const bodyId = params.get('client_id');
  const bodySecret = params.get('client_secret');
  if (header !== undefined) {
    const space = header.indexOf(' ');
    const scheme = (space === -1 ? header : header.slice(0, space)).toLowerCase();
    if (scheme !== 'basic')
      throw basicRealmError(ctx, 'clients authenticate with client_secret_post, Basic or a client_assertion');
    if (bodySecret !== undefined) {
      throw new OAuthError(
        'invalid_request',
        'client credentials were sent both in the Authorization header and in the body',
      );
    }
    if (!ctx.config.clientSecretBasic)
      throw basicRealmError(ctx, 'client_secret_basic is not enabled; use client_secret_post');
    let decoded: string;
    try {
      decoded = atob(header.slice(space + 1).trim());
    } catch {
      throw basicRealmError(ctx, 'the Basic credentials are not valid base64');
    }
    const colon = decoded.indexOf(':');
    if (colon === -1) throw basicRealmError(ctx, 'the Basic credentials must be client_id:client_secret');
    // RFC 6749 §2.3.1: id and secret are form-urlencoded before base64.
    const clientId = formDecode(decoded.slice(0, colon));
    const secret = formDecode(decoded.slice(colon + 1));
    refuseHostile(clientId, 'the client_id of the Basic credentials');
    refuseHostile(secret, 'the client_secret of the Basic credentials');
    if (bodyId !== undefined && bodyId !== clientId) {
      throw new OAuthError('invalid_request', 'client_id in the body differs from the Basic credentials');
    }
    return { clientId, secret, method: 'client_secret_basic' };
  }
  if (bodyId === undefined) throw new OAuthError('invalid_request', 'client_id is required');
  return {
    clientId: bodyId,
    secret: bodySecret,
    method: bodySecret === undefined ? 'none' : 'client_secret_post',
  };
}

/**
 * The `client_auth_failure` key of `clientId` for this request's address: `client:<id> ip:<address>`,
 * or `undefined` (nothing counted) when the address is unknown. A key of the client alone would let
 * anyone lock its owner out.
 *
 * @param ctx - the server context (for `clientIp`)
 * @param request - the request whose address is used
 * @param clientId - the client (or introspection caller) presented
 * @returns the key, or `undefined`
 * @see RFC 6749 §10.10; OAuth 2.1 §7.7
 */
export function authenticationFailureKey(
  ctx: ServerContext,
  request: OAuthRequest,
  clientId: string,
): string | undefined {
  const address = ctx.config.clientIp(request);
  return address === undefined ? undefined : `client:${clientId} ip:${address}`;
}

/** Whether the request carries a client assertion (either of its two parameters). */
export function hasClientAssertion(params: Params): boolean {
  return params.get('client_assertion') !== undefined || params.get('client_assertion_type') !== undefined;
}

/**
 * `private_key_jwt`: the assertion's claimed client, its registered keys, the assertion verified
 * (signature, `iss`/`sub`, audience, `exp`, `jti` used up in `storage.replay`). Every failure is
 * `invalid_client` (400); an unknown client and a client of another method fail alike.
 */
async function authenticateWithAssertion(
  ctx: ServerContext,
  request: OAuthRequest,
  params: Params,
): Promise<ClientRecord> {
  const { config } = ctx;
  const hasBasic = singleCredentialHeader(request, 'authorization') !== undefined;
  const presented = readClientAssertion(params, hasBasic);
  if (presented === undefined) throw new OAuthError('invalid_request', 'client_assertion is missing');
  const fail = (description: string): never => {
    ctx.emit({ type: 'client_authentication.failed', clientId: presented.clientId });
    throw new OAuthError('invalid_client', description);
  };
  if (!config.privateKeyJwt.enabled || ctx.clientKeys === undefined) {
    return fail('private_key_jwt is not enabled on this server');
  }
  // The address goes with every lookup that may fetch (a metadata document, a jwks_uri): per-address budget.
  const clientAddress = config.clientIp(request);
  const client = await ctx.getClient(presented.clientId, clientAddress);
  if (client === null || client.metadata.token_endpoint_auth_method !== 'private_key_jwt') {
    return fail('client authentication failed');
  }
  const keys = ctx.clientKeys.lookup({
    clientId: client.clientId,
    jwks: client.metadata.jwks,
    jwksUri: client.metadata.jwks_uri,
    clientAddress,
  });
  try {
    await verifyClientAssertion(presented, keys, {
      issuer: config.issuer,
      // OIDC Core §9 and RFC 7523 §3 let untyped assertions name the endpoint instead.
      endpointAudiences: [config.urls.token, config.urls.revocation, config.urls.introspection],
      replayStore: config.storage.replay,
      algorithms: config.privateKeyJwt.algorithms,
      maxLifetimeSeconds: config.privateKeyJwt.maxLifetimeSeconds,
      clock: config.runtime.clock,
    });
  } catch (error) {
    if (error instanceof OAuthError && error.code === 'invalid_client') {
      ctx.emit({ type: 'client_authentication.failed', clientId: presented.clientId });
    }
    throw error;
  }
  return client;
}

/**
 * Authenticates the client of a request. Returns the client record, or throws `invalid_client`
 * (401 with `WWW-Authenticate: Basic` when Basic was used, 400 otherwise), `invalid_request` for
 * two methods at once, or `too_many_requests` once this address has failed too often for a
 * configured client (whose secret a person chose).
 *
 * @see RFC 6749 §2.3, RFC 7523 §2.2 and §3
 */
export async function authenticateClient(
  ctx: ServerContext,
  request: OAuthRequest,
  params: Params,
): Promise<ClientRecord> {
  const { config } = ctx;
  if (hasClientAssertion(params)) return authenticateWithAssertion(ctx, request, params);
  const presented = presentedCredentials(ctx, request, params);
  // Only configured secrets can be weak; a generated one is 256 bits (see the module comment).
  const humanChosen = config.staticClients.get(presented.clientId)?.secretHash !== undefined;
  const lockoutKey = humanChosen ? authenticationFailureKey(ctx, request, presented.clientId) : undefined;
  if (presented.secret !== undefined) {
    // An address that keeps failing stays refused even if a later guess is right (no oracle).
    await assertWithinRateLimit(config.rateLimiter, 'client_auth_failure', lockoutKey);
  }
  const { client, readStorage } = await ctx.lookupClient(presented.clientId, config.clientIp(request));
  const fail = async (): Promise<never> => {
    // A failure reads storage once, also when the client came from the cache, the configuration
    // or the memory of unknown ids: an active client's id then fails as slowly as a never-seen
    // one, and timing does not tell which ids exist (bench/timing.mjs).
    if (!readStorage) await config.storage.clients.get(presented.clientId, ctx.now()).catch(() => null);
    ctx.emit({ type: 'client_authentication.failed', clientId: presented.clientId });
    await enforceRateLimit(config.rateLimiter, 'client_auth_failure', lockoutKey);
    const description = 'client authentication failed';
    throw presented.method === 'client_secret_basic'
      ? basicRealmError(ctx, description)
      : new OAuthError('invalid_client', description);
  };
  // The same work whatever the client: one digest, one constant-time comparison of equal lengths.
  const presentedHash = await sha256(presented.secret ?? '');
  const secretMatches = timingSafeEqual(presentedHash, client?.secretHash ?? NO_SECRET_HASH);
  if (client === null) return fail();
  const registered = client.metadata.token_endpoint_auth_method;
  if (registered === 'none') return presented.method === 'none' ? client : fail();
  // A private_key_jwt client has no secret: anything but its assertion fails (secretMatches is false).
  if (presented.method !== registered || !secretMatches) return fail();
  return client;
}
