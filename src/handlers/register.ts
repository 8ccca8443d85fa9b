/**
 * Dynamic client registration (RFC 7591 §3): parse, validate, apply the host's policy, store the
 * client with its secret hashed, answer 201 with the effective metadata.
 * @module
 */
import { z } from 'zod';
import { parseAllowedAddresses } from '../cimd/node-fetcher.js';
import { randomToken, sha256, timeOrderedId } from '../core/crypto.js';
import { OAuthError } from '../core/errors.js';
import { jsonResponse, NO_STORE, type OAuthRequest, type OAuthResponse } from '../core/http.js';
import { parseJsonObject } from '../core/params.js';
import { enforceRateLimit } from '../core/rate-limit.js';
import { clientKeyMetadataProblem } from '../protocol/client-jwks.js';
import { clientMetadataFields, grantTypesProblem } from '../protocol/client-metadata.js';
import { checkRegisteredRedirectUri } from '../protocol/redirect-uri.js';
import { parseScope } from '../protocol/scope.js';
import type { ServerContext } from '../server-context.js';
import type { ClientMetadata, ClientRecord } from '../storage/types.js';

/** The members of RFC 7591 §2 we accept; anything else is ignored and not echoed (REG-10). */
const metadataSchema = z.object({
  ...clientMetadataFields,
  token_endpoint_auth_method: z.string().optional(),
  application_type: z.string().optional(),
  // Checked by clientKeyMetadataProblem (public keys only, supported algorithms, https jwks_uri).
  jwks: z.unknown().optional(),
  jwks_uri: z.unknown().optional(),
});

function metadataError(field: string, problem: string): OAuthError {
  return new OAuthError('invalid_client_metadata', `${field}: ${problem}`);
}

/** Validates registration metadata into the effective, registered metadata. */
function validateMetadata(ctx: ServerContext, body: Record<string, unknown>): ClientMetadata {
  const { config } = ctx;
  // Malformed members (missing, null, wrong JSON type) are invalid_client_metadata (ATK-30);
  // well-formed redirect URIs this server refuses are invalid_redirect_uri (RFC 7591 §3.2.2).
  // A client of the client_credentials grant alone (where enabled) has no redirect URI.
  const grantsAsked = Array.isArray(body.grant_types) ? (body.grant_types as unknown[]) : undefined;
  const codeFlow = grantsAsked === undefined || grantsAsked.includes('authorization_code');
  if (codeFlow && (body.redirect_uris === undefined || body.redirect_uris === null)) {
    throw metadataError('redirect_uris', 'is required');
  }
  const parsed = metadataSchema.safeParse(codeFlow ? body : { redirect_uris: [], ...body });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw metadataError(issue.path.map(String).join('.') || 'body', issue.message);
  }
  const m = parsed.data;

  if (codeFlow && m.redirect_uris.length === 0)
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris must not be empty');
  if (m.redirect_uris.length > config.registration.maxRedirectUris) {
    throw new OAuthError(
      'invalid_redirect_uri',
      `at most ${config.registration.maxRedirectUris} redirect_uris`,
    );
  }
  m.redirect_uris.forEach((uri, i) => {
    const problem = checkRegisteredRedirectUri(uri, config.registration.allowHttpsRedirectUris);
    if (problem !== undefined) throw new OAuthError('invalid_redirect_uri', `redirect_uris[${i}] ${problem}`);
  });

  // RFC 7591 §2 defaults to client_secret_basic; native clients are public (RFC 8252 §8.4), so an
  // omitted method means `none`, and the effective value is echoed (REG-07).
  const method = m.token_endpoint_auth_method ?? 'none';
  const allowedMethods = config.tokenAuthMethods.filter(
    (am) => am === 'none' || config.registration.allowConfidentialClients,
  );
  if (!(allowedMethods as readonly string[]).includes(method)) {
    throw metadataError('token_endpoint_auth_method', `must be one of ${allowedMethods.join(', ')}`);
  }

  // private_key_jwt: the keys, by value or by URL (RFC 7591 §2), validated here once.
  let keys: Pick<ClientMetadata, 'jwks' | 'jwks_uri'> = {};
  if (method === 'private_key_jwt') {
    const checked = clientKeyMetadataProblem(body, {
      algorithms: config.privateKeyJwt.algorithms,
      allowedAddresses: parseAllowedAddresses(config.clientIdMetadataDocuments.allowSpecialUseAddresses),
    });
    if (!checked.ok)
      throw metadataError(checked.problem.startsWith('jwks_uri') ? 'jwks_uri' : 'jwks', checked.problem);
    keys = checked.keys;
  }

  const grantTypes = m.grant_types ?? ['authorization_code', 'refresh_token'];
  const responseTypes = m.response_types ?? (codeFlow ? ['code'] : []);
  // client_credentials: where enabled, for clients that can authenticate (RFC 6749 §4.4).
  const extraGrants = new Set(
    config.clientCredentials.enabled && method !== 'none' ? ['client_credentials'] : [],
  );
  const grantProblem = grantTypesProblem(grantTypes, responseTypes, extraGrants);
  if (grantProblem !== undefined) throw metadataError(...grantProblem);

  // Only native clients with loopback redirects may register (spec §5.3); an omitted
  // application_type means native here, not OIDC's `web` (documented in docs/configuration.md).
  const applicationType = m.application_type ?? 'native';
  if (applicationType !== 'native') throw metadataError('application_type', "must be 'native'");

  // Only the algorithms a signing key exists for (configured keys may cover just one).
  const idTokenAlg = m.id_token_signed_response_alg;
  if (idTokenAlg !== undefined && !config.keys.idTokenAlgs.includes(idTokenAlg)) {
    throw metadataError(
      'id_token_signed_response_alg',
      `must be one of ${config.keys.idTokenAlgs.join(', ')}`,
    );
  }

  let scope: string | undefined;
  if (m.scope !== undefined) {
    let tokens: string[];
    try {
      tokens = parseScope(m.scope);
    } catch {
      throw metadataError('scope', 'must be space-separated scope tokens');
    }
    for (const s of tokens) {
      if (ctx.config.scopePolicy.describe(s) === undefined)
        throw metadataError('scope', `'${s}' is not supported`);
    }
    scope = tokens.join(' ');
  }

  return {
    redirect_uris: m.redirect_uris,
    token_endpoint_auth_method: method as ClientMetadata['token_endpoint_auth_method'],
    grant_types: [...new Set(grantTypes)] as ClientMetadata['grant_types'],
    response_types: codeFlow ? ['code'] : [],
    application_type: 'native',
    ...(m.client_name === undefined ? {} : { client_name: m.client_name }),
    ...(m.client_uri === undefined ? {} : { client_uri: m.client_uri }),
    ...(m.logo_uri === undefined ? {} : { logo_uri: m.logo_uri }),
    ...(m.policy_uri === undefined ? {} : { policy_uri: m.policy_uri }),
    ...(m.tos_uri === undefined ? {} : { tos_uri: m.tos_uri }),
    ...(m.contacts === undefined ? {} : { contacts: m.contacts }),
    ...(scope === undefined ? {} : { scope }),
    ...(m.software_id === undefined ? {} : { software_id: m.software_id }),
    ...(m.software_version === undefined ? {} : { software_version: m.software_version }),
    ...(m.id_token_signed_response_alg === undefined
      ? {}
      : { id_token_signed_response_alg: m.id_token_signed_response_alg }),
    ...(m.dpop_bound_access_tokens === undefined
      ? {}
      : { dpop_bound_access_tokens: m.dpop_bound_access_tokens }),
    ...keys,
  };
}

/**
 * `POST {registration_endpoint}`: registers a client.
 *
 * @throws OAuthError `invalid_redirect_uri`, `invalid_client_metadata` (400), `too_many_requests` (429),
 * `method_not_allowed` (405), or whatever the registration policy throws
 * @see RFC 7591 §3.1, §3.2
 */
export async function handleRegister(ctx: ServerContext, request: OAuthRequest): Promise<OAuthResponse> {
  if (request.method !== 'POST') {
    throw new OAuthError(
      'method_not_allowed',
      'register with POST (client management, RFC 7592, is not offered)',
      {
        headers: { allow: 'POST' },
      },
    );
  }
  const { config } = ctx;
  await enforceRateLimit(config.rateLimiter, 'register', config.clientIp(request));
  const metadata = validateMetadata(ctx, parseJsonObject(request, 'invalid_client_metadata'));
  await config.registration.policy?.({ request, metadata });

  const now = ctx.now();
  // Time first, then 144 random bits (REG-01 asks for 128): new ids go to the right edge of the index.
  const clientId = timeOrderedId(config.runtime.random, config.runtime.clock(), 18);
  const confidential = metadata.token_endpoint_auth_method !== 'none';
  // A private_key_jwt client proves itself with its key: it gets no secret (RFC 7591 §3.2.1).
  const usesSecret = confidential && metadata.token_endpoint_auth_method !== 'private_key_jwt';
  const secret = usesSecret ? randomToken(config.runtime.random, 32) : undefined;
  const ttl = config.registration.unusedClientTtlSeconds;
  const record: ClientRecord = {
    clientId,
    ...(secret === undefined ? {} : { secretHash: await sha256(secret) }),
    metadata,
    origin: 'dynamic',
    createdAt: now,
    ...(ttl > 0 ? { expiresAt: now + ttl } : {}),
  };
  await config.storage.clients.create(record);
  ctx.emit({ type: 'client.registered', clientId, confidential });

  return jsonResponse(
    201,
    {
      client_id: clientId,
      client_id_issued_at: now,
      ...(secret === undefined ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
      ...metadata,
    },
    NO_STORE,
  );
}
