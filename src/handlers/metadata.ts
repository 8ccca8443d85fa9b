/**
 * Discovery documents: RFC 8414 authorization-server metadata, OpenID Connect Discovery 1.0, and
 * RFC 9728 protected-resource metadata. All are built once from the same configuration, so they
 * cannot disagree, and advertise only what is enabled.
 * @module
 */
import type { ServerConfig } from '../config.js';
import { OAuthError } from '../core/errors.js';
import { type OAuthRequest, type OAuthResponse, rawJsonResponse } from '../core/http.js';
import { SUPPORTED_CLAIMS } from '../protocol/claims.js';

type Doc = Record<string, unknown>;

/** Drops `undefined`, `null` and empty arrays: RFC 8414 §3.2 omits members with no value. */
function compact(doc: Doc): Doc {
  const out: Doc = {};
  for (const [key, value] of Object.entries(doc)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    out[key] = value;
  }
  return out;
}

/** The RFC 8414 document. */
export function authorizationServerMetadata(config: ServerConfig): Doc {
  const secretMethods = config.tokenAuthMethods.filter((m) => m !== 'none');
  // RFC 8414 §2: the algorithms of private_key_jwt, for each endpoint that accepts it.
  const signingAlgs = config.privateKeyJwt.enabled ? config.privateKeyJwt.algorithms : undefined;
  return compact({
    issuer: config.issuer,
    authorization_endpoint: config.urls.authorization,
    token_endpoint: config.urls.token,
    registration_endpoint: config.registration.enabled ? config.urls.registration : undefined,
    revocation_endpoint: config.urls.revocation,
    introspection_endpoint: config.introspection.enabled ? config.urls.introspection : undefined,
    userinfo_endpoint: config.urls.userinfo,
    jwks_uri: config.urls.jwks,
    scopes_supported: config.scopePolicy.supported,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: config.grantTypes,
    token_endpoint_auth_methods_supported: config.tokenAuthMethods,
    token_endpoint_auth_signing_alg_values_supported: signingAlgs,
    revocation_endpoint_auth_methods_supported: config.tokenAuthMethods,
    revocation_endpoint_auth_signing_alg_values_supported: signingAlgs,
    introspection_endpoint_auth_methods_supported: config.introspection.enabled ? secretMethods : undefined,
    introspection_endpoint_auth_signing_alg_values_supported: config.introspection.enabled
      ? signingAlgs
      : undefined,
    code_challenge_methods_supported: ['S256'],
    // RFC 9449 §5.1: the proof algorithms the token endpoint accepts (absent when DPoP is off).
    dpop_signing_alg_values_supported: config.dpop.enabled ? config.dpop.algorithms : undefined,
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: config.cimdEnabled,
    protected_resources: config.resources.map((r) => r.resource),
    service_documentation: config.metadata.serviceDocumentation,
    ui_locales_supported: config.metadata.uiLocalesSupported,
    op_policy_uri: config.metadata.policyUri,
    op_tos_uri: config.metadata.tosUri,
  });
}

/** The OpenID Connect Discovery document: the RFC 8414 members plus the OpenID Provider ones. */
export function openidConfiguration(config: ServerConfig): Doc {
  return compact({
    ...authorizationServerMetadata(config),
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: config.keys.idTokenAlgs,
    claims_supported: SUPPORTED_CLAIMS,
    claim_types_supported: ['normal'],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    display_values_supported: ['page'],
  });
}

/** The RFC 9728 document of one protected resource. */
export function protectedResourceMetadata(
  config: ServerConfig,
  resource: ServerConfig['resources'][number],
): Doc {
  return compact({
    resource: resource.resource,
    authorization_servers: [config.issuer],
    scopes_supported: resource.scopes,
    bearer_methods_supported: ['header'],
    // RFC 9728 §2: the guard of `server.guard(...)` accepts DPoP-bound tokens with these algorithms.
    dpop_signing_alg_values_supported: config.dpop.enabled ? config.dpop.algorithms : undefined,
    resource_name: resource.name,
    resource_documentation: resource.documentation,
  });
}

const CORS_GET: Readonly<Record<string, string>> = Object.freeze({
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-max-age': '86400',
});

/** Serves a public, cacheable JSON document: GET/HEAD with CORS, OPTIONS preflight, everything else 405. */
export function publicDocument(
  request: OAuthRequest,
  body: string,
  cacheControl = 'public, max-age=300',
): OAuthResponse {
  if (request.method === 'OPTIONS') {
    return { status: 204, headers: { ...CORS_GET, allow: 'GET, HEAD, OPTIONS' } };
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    throw new OAuthError('method_not_allowed', 'this document is read with GET', {
      headers: { allow: 'GET, HEAD, OPTIONS', ...CORS_GET },
    });
  }
  const response = rawJsonResponse(200, body, { 'cache-control': cacheControl, ...CORS_GET });
  return request.method === 'HEAD' ? { status: 200, headers: response.headers } : response;
}

/** All discovery documents of a server, serialised once, keyed by the path they are served at. */
export function discoveryDocuments(config: ServerConfig): Map<string, string> {
  const docs = new Map<string, string>();
  const issuerPath = new URL(config.issuer).pathname.replace(/\/$/, '');
  // RFC 8414 §3.1 inserts the well-known segment before the issuer's path;
  // OpenID Connect Discovery §4 appends it.
  docs.set(
    `/.well-known/oauth-authorization-server${issuerPath}`,
    JSON.stringify(authorizationServerMetadata(config)),
  );
  docs.set(`${issuerPath}/.well-known/openid-configuration`, JSON.stringify(openidConfiguration(config)));
  for (const resource of config.resources) {
    if (resource.metadataPath !== undefined) {
      docs.set(resource.metadataPath, JSON.stringify(protectedResourceMetadata(config, resource)));
    }
  }
  return docs;
}
