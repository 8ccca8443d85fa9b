/**
 * `/openapi.json`: OpenAPI 3.0.3 of this origin. The business API and the documents are routes of
 * the Hono app, declared with `@hono/zod-openapi`, so they describe themselves. The library serves
 * the OAuth endpoints, so they are declared here, as schemas in the same registry, at the paths the
 * discovery metadata gives; the oauth2 security scheme takes its URLs and its 38 scopes from the
 * metadata too. Built once at start-up.
 * @module
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env } from 'hono';
import type { ScopeRegistry } from 'portcullis';
import { z } from 'zod';
import { FAMILIES } from '../api/route.js';
import { type Discovery, pathOf } from './metadata.js';

type Registry = OpenAPIHono['openAPIRegistry'];

const oauthError = z
  .object({ error: z.string(), error_description: z.string().optional() })
  .describe('An OAuth error (RFC 6749 §5.2)');
const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: oauthError } },
});
const form = (schema: z.ZodObject) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema } },
});
const anyDocument = { 'application/json': { schema: z.looseObject({}) } };

const optional = (description: string) => z.string().optional().describe(description);
const tooManyRequests = errorResponse(
  '`too_many_requests`: over a per-address limit; `Retry-After` says when to retry',
);
const unavailable = errorResponse(
  '`temporarily_unavailable`: the storage is unreachable; `Retry-After` says when to retry',
);

/**
 * The body fields of client authentication at an endpoint, from the methods its metadata
 * advertises (`client_secret_basic` travels in the `Authorization` header instead).
 */
function clientAuthenticationFields(methods: readonly string[] | undefined) {
  return {
    client_id: optional('The client identifier (in the assertion or the Basic credentials otherwise)'),
    ...(methods?.includes('client_secret_post')
      ? {
          client_secret: optional(
            'Confidential clients registered with `client_secret_post` (others send `Authorization: Basic`)',
          ),
        }
      : {}),
    ...(methods?.includes('private_key_jwt')
      ? {
          client_assertion_type: optional(
            '`urn:ietf:params:oauth:client-assertion-type:jwt-bearer`, for `private_key_jwt` clients (RFC 7523)',
          ),
          client_assertion: optional(
            'The signed client assertion of a `private_key_jwt` client (RFC 7523 §2.2)',
          ),
        }
      : {}),
  };
}

/** Declares the library's endpoints and discovery documents at the paths of the metadata. */
function describeOAuthEndpoints(registry: Registry, discovery: Discovery): void {
  const as = discovery.authorizationServer;
  const tags = ['oauth'];

  registry.registerPath({
    method: 'get',
    path: pathOf(as.authorization_endpoint),
    operationId: 'authorize',
    tags,
    summary: 'Authorization endpoint (browser navigation): login, consent, redirect with code, state and iss',
    request: {
      query: z.object({
        response_type: z.literal('code').describe('Always `code`'),
        client_id: z.string().describe('The registered client identifier'),
        redirect_uri: optional('A registered redirect URI (loopback port may differ)'),
        scope: optional('Space-separated scopes'),
        state: optional('Returned unchanged'),
        code_challenge: z.string().describe('PKCE S256 challenge (RFC 7636)'),
        code_challenge_method: z.literal('S256').describe('Always `S256`'),
        resource: optional('RFC 8707 resource indicator, e.g. the MCP resource'),
      }),
    },
    responses: {
      200: { description: 'Consent page (HTML)', content: { 'text/html': { schema: z.string() } } },
      303: {
        description: 'Redirect to the login page, or to the redirect URI with `code`/`error`, `state`, `iss`',
      },
      400: { description: 'Unknown client or redirect URI: an error page, never a redirect' },
    },
  });

  registry.registerPath({
    method: 'post',
    path: pathOf(as.token_endpoint),
    operationId: 'token',
    tags,
    summary: 'Token endpoint: `authorization_code` and `refresh_token` grants',
    request: {
      body: form(
        z.object({
          grant_type: z.enum(as.grant_types_supported as [string, ...string[]]),
          ...clientAuthenticationFields(as.token_endpoint_auth_methods_supported),
          code: optional('The authorization code'),
          redirect_uri: optional('The redirect URI of the authorization request'),
          code_verifier: optional('The PKCE verifier'),
          refresh_token: optional('For `grant_type=refresh_token`'),
          resource: optional('RFC 8707 resource indicator'),
          scope: optional('For refresh: a narrower scope'),
        }),
      ),
    },
    responses: {
      200: {
        description: 'Tokens',
        content: {
          'application/json': {
            schema: z.object({
              access_token: z.string(),
              token_type: z.string(),
              expires_in: z.number().int(),
              refresh_token: z.string().optional(),
              scope: z.string().optional(),
              id_token: z.string().optional(),
            }),
          },
        },
      },
      400: errorResponse('`invalid_request`, `invalid_grant`, `invalid_scope`, `unsupported_grant_type`...'),
      401: errorResponse('`invalid_client`'),
      429: tooManyRequests,
      503: unavailable,
    },
  });

  if (as.registration_endpoint !== undefined) {
    registry.registerPath({
      method: 'post',
      path: pathOf(as.registration_endpoint),
      operationId: 'registerClient',
      tags,
      summary: 'Dynamic client registration (RFC 7591): loopback redirect URIs only',
      request: {
        body: {
          required: true,
          content: {
            'application/json': {
              schema: z.object({
                redirect_uris: z.array(z.string().openapi({ example: 'http://127.0.0.1:49152/callback' })),
                client_name: z.string().optional(),
                application_type: z.literal('native').optional(),
                token_endpoint_auth_method: z
                  .enum(as.token_endpoint_auth_methods_supported as [string, ...string[]])
                  .optional(),
                grant_types: z.array(z.enum(as.grant_types_supported as [string, ...string[]])).optional(),
                response_types: z.array(z.literal('code')).optional(),
                scope: z.string().optional(),
                ...(as.token_endpoint_auth_methods_supported?.includes('private_key_jwt')
                  ? {
                      jwks: z.looseObject({ keys: z.array(z.looseObject({})) }).optional(),
                      jwks_uri: z.string().optional().describe('https URL of the client’s public keys'),
                    }
                  : {}),
              }),
            },
          },
        },
      },
      responses: {
        201: {
          description:
            'Registered; the body echoes the metadata with `client_id` (and `client_secret` for confidential clients)',
          content: { 'application/json': { schema: z.looseObject({ client_id: z.string() }) } },
        },
        400: errorResponse('`invalid_redirect_uri` (e.g. an https callback) or `invalid_client_metadata`'),
        429: tooManyRequests,
        503: unavailable,
      },
    });
  }

  if (as.userinfo_endpoint !== undefined) {
    registry.registerPath({
      method: 'get',
      path: pathOf(as.userinfo_endpoint),
      operationId: 'userinfo',
      tags,
      summary: 'OpenID Connect UserInfo: the claims allowed by the token scopes',
      security: [{ oauth2: ['openid'] }],
      responses: {
        200: {
          description: 'Claims',
          content: { 'application/json': { schema: z.looseObject({ sub: z.string() }) } },
        },
        401: errorResponse('`invalid_token`'),
      },
    });
  }

  const tokenForm = (methods: readonly string[] | undefined) =>
    form(
      z.object({
        token: z.string().describe('The access or refresh token'),
        token_type_hint: z.enum(['access_token', 'refresh_token']).optional(),
        ...clientAuthenticationFields(methods),
      }),
    );
  if (as.revocation_endpoint !== undefined) {
    registry.registerPath({
      method: 'post',
      path: pathOf(as.revocation_endpoint),
      operationId: 'revoke',
      tags,
      summary: 'Token revocation (RFC 7009)',
      request: { body: tokenForm(as.revocation_endpoint_auth_methods_supported) },
      responses: {
        200: { description: 'Revoked (or already invalid)' },
        400: errorResponse('`invalid_request`, `unauthorized_client` (another client’s token)'),
        401: errorResponse('`invalid_client`'),
        429: tooManyRequests,
        503: unavailable,
      },
    });
  }
  if (as.introspection_endpoint !== undefined) {
    registry.registerPath({
      method: 'post',
      path: pathOf(as.introspection_endpoint),
      operationId: 'introspect',
      tags,
      summary: 'Token introspection (RFC 7662), for registered resource servers',
      request: { body: tokenForm(as.introspection_endpoint_auth_methods_supported) },
      responses: {
        200: {
          description: 'Token state',
          content: { 'application/json': { schema: z.looseObject({ active: z.boolean() }) } },
        },
        401: errorResponse('`invalid_client`'),
        429: tooManyRequests,
        503: unavailable,
      },
    });
  }

  const documents: [url: string | undefined, operationId: string, summary: string][] = [
    [
      discovery.authorizationServerUrl,
      'getAuthorizationServerMetadata',
      'Authorization server metadata (RFC 8414)',
    ],
    [discovery.openidConfigurationUrl, 'getOpenidConfiguration', 'OpenID Connect Discovery'],
    [discovery.api.url, 'getProtectedResourceMetadata', 'Protected resource metadata of the API (RFC 9728)'],
    [discovery.mcp.url, 'getMcpProtectedResourceMetadata', 'Protected resource metadata of /mcp (RFC 9728)'],
    [as.jwks_uri, 'getJwks', 'Public signing keys (JWK Set)'],
  ];
  for (const [url, operationId, summary] of documents) {
    if (url === undefined) continue;
    registry.registerPath({
      method: 'get',
      path: pathOf(url),
      operationId,
      tags: ['discovery'],
      summary,
      responses: { 200: { description: 'The document', content: anyDocument } },
    });
  }
}

/** What the document is built from. */
export interface OpenApiInput {
  readonly discovery: Discovery;
  readonly scopes: ScopeRegistry;
  readonly title: string;
}

/**
 * Builds the OpenAPI 3.0.3 document of `app`: its routes, the library's endpoints, and the oauth2
 * scheme (authorization code with PKCE) with every scope of the metadata.
 *
 * @param app - the whole app, every route registered
 */
export function buildOpenApi<E extends Env>(
  app: OpenAPIHono<E>,
  input: OpenApiInput,
): Record<string, unknown> {
  const { discovery } = input;
  const as = discovery.authorizationServer;
  describeOAuthEndpoints(app.openAPIRegistry, discovery);
  const scopes: Record<string, string> = {};
  for (const name of as.scopes_supported) scopes[name] = input.scopes.get(name)?.description ?? name;
  app.openAPIRegistry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    description: `Authorization code with PKCE (S256). Register a loopback client at ${as.registration_endpoint ?? 'the registration endpoint'}.`,
    flows: {
      authorizationCode: {
        authorizationUrl: as.authorization_endpoint,
        tokenUrl: as.token_endpoint,
        refreshUrl: as.token_endpoint,
        scopes,
      },
    },
  });
  return app.getOpenAPIDocument({
    openapi: '3.0.3',
    info: {
      title: `${input.title} API`,
      version: '1.0.0',
      description:
        'The course-school platform API. Requests without a token are served as anonymous (public catalog only); ' +
        'others carry `Authorization: Bearer <access token>` obtained with the authorization-code flow and PKCE ' +
        `(see ${as.issuer}/auth.md). Lists are paginated with \`limit\` and \`cursor\`.`,
    },
    servers: [{ url: as.issuer }],
    tags: [
      ...Object.entries(FAMILIES).map(([name, description]) => ({ name, description })),
      { name: 'oauth', description: 'OAuth 2.1 and OpenID Connect endpoints' },
      { name: 'discovery', description: 'Metadata documents' },
      { name: 'documents', description: 'Documents for people and agents' },
      { name: 'mcp', description: 'Model Context Protocol server' },
    ],
  }) as unknown as Record<string, unknown>;
}
