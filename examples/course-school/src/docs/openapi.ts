/**
 * `/openapi.json`: OpenAPI 3.0.3 of this origin, generated from the route table (every business
 * operation with its parameters, bodies, responses and its one scope) and from the discovery
 * metadata (the OAuth endpoints, the `oauth2` scheme and all its scopes). Built once at start-up.
 * @module
 */
import type { ScopeRegistry } from 'portcullis';
import { z } from 'zod';
import { API_PREFIX, type ApiRoute, FAMILIES } from '../api/route.js';
import { type Discovery, pathOf } from './metadata.js';

type Json = Record<string, unknown>;

/**
 * The JSON Schema of a zod schema, for OpenAPI 3.0. zod spells `date-time` out as a 300-character
 * `pattern` as well; `format` says the same, so the pattern is dropped to keep the document small.
 */
const toSchema = (schema: z.ZodType, io: 'input' | 'output'): Json =>
  dropDateTimePatterns(z.toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as Json);

function dropDateTimePatterns(node: Json): Json {
  if (node.format === 'date-time') delete node.pattern;
  for (const value of Object.values(node)) {
    if (Array.isArray(value))
      for (const item of value)
        if (typeof item === 'object' && item !== null) dropDateTimePatterns(item as Json);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      dropDateTimePatterns(value as Json);
  }
  return node;
}

const ERROR = { $ref: '#/components/schemas/Error' };
const errorResponse = (description: string, headers?: Json): Json => ({
  description,
  ...(headers === undefined ? {} : { headers }),
  content: { 'application/json': { schema: ERROR } },
});
const WWW_AUTHENTICATE = {
  'WWW-Authenticate': {
    description: 'Bearer challenge naming the protected resource metadata (RFC 6750 §3, RFC 9728 §5.1)',
    schema: { type: 'string' },
  },
};

/** One parameter per property of an object schema. */
function parameters(where: 'path' | 'query', schema: z.ZodType | undefined): Json[] {
  if (schema === undefined) return [];
  const json = toSchema(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, Json>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

function operation(route: ApiRoute): Json {
  const responses: Json = {
    [route.response.status]: {
      description: route.response.description,
      ...(route.response.schema === undefined
        ? route.operationId === 'downloadObject'
          ? { content: { '*/*': { schema: { type: 'string', format: 'binary' } } } }
          : {}
        : { content: { 'application/json': { schema: toSchema(route.response.schema, 'output') } } }),
    },
    400: errorResponse('Invalid request: `issues` lists each problem with its location'),
    401: errorResponse(
      route.access === 'public'
        ? 'Invalid, expired or revoked token (`invalid_token`); no token is served as anonymous'
        : 'No token, or an invalid one (`invalid_token`)',
      WWW_AUTHENTICATE,
    ),
    403: errorResponse(
      route.access === 'owner'
        ? 'The token lacks the scope (`insufficient_scope`), or its user is not the school owner (`forbidden`)'
        : 'The token lacks the scope (`insufficient_scope`)',
      WWW_AUTHENTICATE,
    ),
  };
  if (route.params !== undefined)
    responses[404] = errorResponse('No such record, or not visible to the caller');
  if (route.body !== undefined) {
    responses[413] = errorResponse('The body is too large');
    responses[415] = errorResponse('Unsupported Content-Type');
  }
  const access = {
    public: 'Anyone: without a token the caller is anonymous and sees public records only.',
    user: 'A signed-in user (token required).',
    owner: 'The school owner (token required).',
  }[route.access];
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: `${route.description === undefined ? '' : `${route.description}\n\n`}Scope: \`${route.scope}\`. ${access}`,
    tags: [route.family],
    parameters: [...parameters('path', route.params), ...parameters('query', route.query)],
    ...(route.body === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            content:
              route.body.kind === 'json'
                ? { 'application/json': { schema: toSchema(route.body.schema, 'input') } }
                : {
                    '*/*': {
                      schema: { type: 'string', format: 'binary', description: route.body.description },
                    },
                  },
          },
        }),
    responses,
    security: route.access === 'public' ? [{}, { oauth2: [route.scope] }] : [{ oauth2: [route.scope] }],
    'x-scope': route.scope,
    'x-access': route.access,
  };
}

const form = (properties: Json, required: string[]): Json => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties, required } } },
});
const str = (description: string): Json => ({ type: 'string', description });
const oauthError = (description: string) => errorResponse(description);

/** The OAuth and discovery endpoints, at the paths the metadata gives. */
function oauthPaths(discovery: Discovery): Record<string, Json> {
  const as = discovery.authorizationServer;
  const paths: Record<string, Json> = {};
  const tags = ['oauth'];
  paths[pathOf(as.authorization_endpoint)] = {
    get: {
      operationId: 'authorize',
      tags,
      summary:
        'Authorization endpoint (browser navigation): login, consent, redirect with code, state and iss',
      parameters: [
        ['response_type', 'Always `code`', true],
        ['client_id', 'The registered client identifier', true],
        ['redirect_uri', 'A registered redirect URI (loopback port may differ)', false],
        ['scope', 'Space-separated scopes', false],
        ['state', 'Returned unchanged', false],
        ['code_challenge', 'PKCE S256 challenge (RFC 7636)', true],
        ['code_challenge_method', 'Always `S256`', true],
        ['resource', 'RFC 8707 resource indicator, e.g. the MCP resource', false],
      ].map(([name, description, required]) => ({
        name,
        in: 'query',
        required,
        description,
        schema: { type: 'string' },
      })),
      responses: {
        200: { description: 'Consent page (HTML)', content: { 'text/html': { schema: { type: 'string' } } } },
        303: {
          description:
            'Redirect to the login page, or to the redirect URI with `code`/`error`, `state`, `iss`',
        },
        400: { description: 'Unknown client or redirect URI: an error page, never a redirect' },
      },
    },
  };
  paths[pathOf(as.token_endpoint)] = {
    post: {
      operationId: 'token',
      tags,
      summary: 'Token endpoint: `authorization_code` and `refresh_token` grants',
      requestBody: form(
        {
          grant_type: { type: 'string', enum: as.grant_types_supported },
          code: str('The authorization code'),
          redirect_uri: str('The redirect URI of the authorization request'),
          client_id: str('The client identifier'),
          client_secret: str('Confidential clients (`client_secret_post`)'),
          code_verifier: str('The PKCE verifier'),
          refresh_token: str('For `grant_type=refresh_token`'),
          resource: str('RFC 8707 resource indicator'),
          scope: str('For refresh: a narrower scope'),
        },
        ['grant_type', 'client_id'],
      ),
      responses: {
        200: {
          description: 'Tokens',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  access_token: { type: 'string' },
                  token_type: { type: 'string' },
                  expires_in: { type: 'integer' },
                  refresh_token: { type: 'string' },
                  scope: { type: 'string' },
                  id_token: { type: 'string' },
                },
                required: ['access_token', 'token_type', 'expires_in'],
              },
            },
          },
        },
        400: oauthError('`invalid_request`, `invalid_grant`, `invalid_scope`, `unsupported_grant_type`...'),
        401: oauthError('`invalid_client`'),
      },
    },
  };
  if (as.registration_endpoint !== undefined) {
    paths[pathOf(as.registration_endpoint)] = {
      post: {
        operationId: 'registerClient',
        tags,
        summary: 'Dynamic client registration (RFC 7591): loopback redirect URIs only',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['redirect_uris'],
                properties: {
                  client_name: { type: 'string' },
                  application_type: { type: 'string', enum: ['native'] },
                  redirect_uris: {
                    type: 'array',
                    items: { type: 'string', example: 'http://127.0.0.1:49152/callback' },
                  },
                  token_endpoint_auth_method: {
                    type: 'string',
                    enum: as.token_endpoint_auth_methods_supported,
                  },
                  grant_types: { type: 'array', items: { type: 'string', enum: as.grant_types_supported } },
                  response_types: { type: 'array', items: { type: 'string', enum: ['code'] } },
                  scope: { type: 'string' },
                },
              },
            },
          },
        },
        responses: {
          201: {
            description:
              'Registered; the body echoes the metadata with `client_id` (and `client_secret` for confidential clients)',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['client_id'],
                  properties: { client_id: { type: 'string' } },
                },
              },
            },
          },
          400: oauthError('`invalid_redirect_uri` (e.g. an https callback) or `invalid_client_metadata`'),
        },
      },
    };
  }
  if (as.userinfo_endpoint !== undefined) {
    paths[pathOf(as.userinfo_endpoint)] = {
      get: {
        operationId: 'userinfo',
        tags,
        summary: 'OpenID Connect UserInfo: the claims allowed by the token scopes',
        security: [{ oauth2: ['openid'] }],
        responses: {
          200: {
            description: 'Claims',
            content: {
              'application/json': {
                schema: { type: 'object', properties: { sub: { type: 'string' } }, required: ['sub'] },
              },
            },
          },
          401: errorResponse('`invalid_token`', WWW_AUTHENTICATE),
        },
      },
    };
  }
  const tokenForm = form(
    {
      token: str('The access or refresh token'),
      token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] },
      client_id: str('The client identifier'),
      client_secret: str('Confidential clients'),
    },
    ['token'],
  );
  if (as.revocation_endpoint !== undefined) {
    paths[pathOf(as.revocation_endpoint)] = {
      post: {
        operationId: 'revoke',
        tags,
        summary: 'Token revocation (RFC 7009)',
        requestBody: tokenForm,
        responses: { 200: { description: 'Revoked (or already invalid)' }, 400: oauthError('Bad request') },
      },
    };
  }
  if (as.introspection_endpoint !== undefined) {
    paths[pathOf(as.introspection_endpoint)] = {
      post: {
        operationId: 'introspect',
        tags,
        summary: 'Token introspection (RFC 7662), for registered resource servers',
        requestBody: tokenForm,
        responses: {
          200: {
            description: 'Token state',
            content: {
              'application/json': {
                schema: { type: 'object', required: ['active'], properties: { active: { type: 'boolean' } } },
              },
            },
          },
          401: oauthError('`invalid_client`'),
        },
      },
    };
  }
  const documents: [string, string, string][] = [
    [
      discovery.authorizationServerUrl,
      'getAuthorizationServerMetadata',
      'Authorization server metadata (RFC 8414)',
    ],
    [discovery.openidConfigurationUrl, 'getOpenidConfiguration', 'OpenID Connect Discovery'],
    [discovery.api.url, 'getProtectedResourceMetadata', 'Protected resource metadata of the API (RFC 9728)'],
    [discovery.mcp.url, 'getMcpProtectedResourceMetadata', 'Protected resource metadata of /mcp (RFC 9728)'],
    ...(as.jwks_uri === undefined
      ? []
      : [[as.jwks_uri, 'getJwks', 'Public signing keys (JWK Set)'] as [string, string, string]]),
  ];
  for (const [url, operationId, summary] of documents) {
    paths[pathOf(url)] = {
      get: {
        operationId,
        tags: ['discovery'],
        summary,
        responses: {
          200: {
            description: 'The document',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
        },
      },
    };
  }
  return paths;
}

/** The documents and the MCP endpoint of this origin. */
function sitePaths(): Record<string, Json> {
  const doc = (operationId: string, summary: string, type: string): Json => ({
    get: {
      operationId,
      tags: ['documents'],
      summary,
      responses: { 200: { description: summary, content: { [type]: { schema: { type: 'string' } } } } },
    },
  });
  return {
    '/openapi.json': {
      get: {
        operationId: 'getOpenapi',
        tags: ['documents'],
        summary: 'This document',
        responses: {
          200: {
            description: 'OpenAPI 3.0.3',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
        },
      },
    },
    '/auth.md': doc('getAuthMd', 'Authentication walkthrough (Markdown)', 'text/markdown'),
    '/llms.txt': doc('getLlmsTxt', 'Index of the site for AI agents', 'text/plain'),
    '/pricing.md': doc('getPricingMd', 'What the school sells, with prices (Markdown)', 'text/markdown'),
    '/mcp': {
      post: {
        operationId: 'mcp',
        tags: ['mcp'],
        summary: 'MCP server (Streamable HTTP, stateless): anonymous catalog reads',
        description:
          'JSON-RPC 2.0 messages of the Model Context Protocol. Tools: search_courses, get_course, list_membership_plans. ' +
          'A token, if sent, must be valid for the resource `/mcp`. Requests with a foreign `Origin` are refused with 403.',
        security: [{}, { oauth2: [] }],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', properties: { jsonrpc: { type: 'string', enum: ['2.0'] } } },
            },
          },
        },
        responses: {
          200: {
            description: 'JSON-RPC response',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          202: { description: 'Notification accepted' },
          400: { description: 'Invalid JSON-RPC, or unsupported MCP-Protocol-Version' },
          401: errorResponse('Invalid token (`invalid_token`)', WWW_AUTHENTICATE),
          403: { description: 'Origin not allowed' },
        },
      },
    },
  };
}

/** Builds the OpenAPI document. */
export function buildOpenApi(options: {
  readonly routes: readonly ApiRoute[];
  readonly discovery: Discovery;
  readonly scopes: ScopeRegistry;
  readonly title: string;
}): Json {
  const { discovery } = options;
  const as = discovery.authorizationServer;
  const paths: Record<string, Json> = {};
  for (const route of options.routes) {
    const path = `${API_PREFIX}${route.path}`;
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route) };
  }
  const scopes: Record<string, string> = {};
  for (const name of as.scopes_supported) scopes[name] = options.scopes.get(name)?.description ?? name;
  return {
    openapi: '3.0.3',
    info: {
      title: `${options.title} API`,
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
    paths: { ...paths, ...oauthPaths(discovery), ...sitePaths() },
    components: {
      securitySchemes: {
        oauth2: {
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
        },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'string',
              description: 'Error code, e.g. invalid_request, invalid_token, insufficient_scope',
            },
            error_description: { type: 'string' },
            issues: {
              type: 'array',
              items: {
                type: 'object',
                required: ['path', 'message'],
                properties: { path: { type: 'string', example: 'body.title' }, message: { type: 'string' } },
              },
            },
          },
        },
      },
    },
  };
}
