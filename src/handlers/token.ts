/**
 * The token endpoint (RFC 6749 §3.2): parse the form, authenticate the client, check the grant type
 * is supported and registered, run the grant, answer JSON with `Cache-Control: no-store`.
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
import { parseFormBody, parseQuery } from '../core/params.js';
import { enforceRateLimit } from '../core/rate-limit.js';
import { authorizationCodeGrant } from '../grants/authorization-code.js';
import { clientCredentialsGrant } from '../grants/client-credentials.js';
import { refreshTokenGrant } from '../grants/refresh-token.js';
import { authenticateClient } from '../protocol/client-auth.js';
import { requireDpopForClient } from '../protocol/dpop-binding.js';
import { dpopNonceHeader, requestDpopProof } from '../protocol/dpop-request.js';
import type { ServerContext } from '../server-context.js';

// Credentials and grants in the URL end up in logs and Referer headers (RFC 6749 §2.3.1).
const BODY_ONLY = ['client_secret', 'client_assertion', 'code', 'refresh_token', 'code_verifier'];

/**
 * `POST {token_endpoint}`. A request with a `DPoP` proof gets tokens bound to the proof's key
 * (`token_type: DPoP`); the proof is checked once the client is authenticated, so junk requests
 * spend no replay-store entries.
 *
 * @throws OAuthError `invalid_request`, `invalid_client` (400, or 401 + `WWW-Authenticate` after Basic),
 * `invalid_grant`, `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`, `invalid_target`,
 * `invalid_dpop_proof`, `use_dpop_nonce` (400 + `DPoP-Nonce`), `too_many_requests` (429)
 * @see RFC 6749 §4.1.3, §5, §6; RFC 7636 §4.5; RFC 8707 §2.2; OIDC Core §3.1.3; RFC 9449 §5
 */
export async function handleToken(ctx: ServerContext, request: OAuthRequest): Promise<OAuthResponse> {
  if (request.method !== 'POST') throw methodNotAllowed(['POST']);
  const { config } = ctx;
  const ip = config.clientIp(request);
  await enforceRateLimit(config.rateLimiter, 'token', ip === undefined ? undefined : `ip:${ip}`);
  const query = parseQuery(request);
  for (const name of BODY_ONLY) {
    if (query.has(name))
      throw new OAuthError('invalid_request', `${name} must be sent in the request body, never in the URL`);
  }
  const params = parseFormBody(request);
  const repeated = params.repeated().filter((name) => name !== 'resource');
  if (repeated.length > 0) {
    throw new OAuthError('invalid_request', `the '${repeated[0]}' parameter was given more than once`);
  }
  const grantType = params.get('grant_type');
  if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required');
  if (!config.grantTypes.includes(grantType)) {
    throw new OAuthError(
      'unsupported_grant_type',
      `the grants supported are ${config.grantTypes.join(', ')}`,
    );
  }

  const client = await authenticateClient(ctx, request, params);
  // Only a client that proved its secret has a budget of its own: a public client_id proves
  // nothing, and junk requests naming it must not spend its users' budget (ABU-01).
  if (client.metadata.token_endpoint_auth_method !== 'none') {
    await enforceRateLimit(config.rateLimiter, 'token', `client:${client.clientId}`);
  }
  if (!(client.metadata.grant_types as readonly string[]).includes(grantType)) {
    throw new OAuthError('unauthorized_client', `the client is not registered for the ${grantType} grant`);
  }
  if (grantType === 'client_credentials' && client.metadata.token_endpoint_auth_method === 'none') {
    throw new OAuthError('unauthorized_client', 'client_credentials is for confidential clients only');
  }
  const proof = await requestDpopProof(ctx, request, config.urls.token);
  requireDpopForClient(proof, client.metadata.dpop_bound_access_tokens);
  const body =
    grantType === 'authorization_code'
      ? await authorizationCodeGrant(ctx, client, params, proof?.jkt)
      : grantType === 'client_credentials'
        ? await clientCredentialsGrant(ctx, client, params, proof?.jkt)
        : await refreshTokenGrant(ctx, client, params, proof);
  return jsonResponse(200, body, { ...NO_STORE, ...(await dpopNonceHeader(ctx)) });
}
