/**
 * The business API as a Hono app: each operation of the route table becomes one `@hono/zod-openapi`
 * route, so the same declaration drives authorization (the route's one scope to the library's
 * guard, then its role rule), request validation (400 with every problem located: `query.limit`,
 * `body.title`, NUL and other hostile characters in any string included) and the operation in
 * `/openapi.json`. Bodies are read within their limit before validation (`edge/body-limit.ts`).
 * @module
 */
import { createRoute, OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { toResponse } from 'portcullis/fetch';
import { z } from 'zod';
import type { BearerGuard } from '../auth/bearer-guard.js';
import { type BodyRefusal, bodyWithin } from '../edge/body-limit.js';
import { ApiError, errorResponse, invalidRequest, issuesOf, logFailure } from './errors.js';
import { API_PREFIX, type ApiRoute, type ApiServices, type Caller } from './route.js';

/** Largest JSON body the business API accepts. */
export const MAX_JSON_BYTES = 64 * 1024;

/** What the API's middleware hands its handlers. */
export type ApiEnv = { Variables: { caller: Caller } };

/** What the API needs. */
export interface ApiAppDeps {
  /** The guard of resource `$ISSUER`. */
  readonly guard: BearerGuard;
  readonly services: ApiServices;
}

/** Where each validation target appears in an issue's path. */
const WHERE: Readonly<Record<string, string>> = { param: 'path', query: 'query', json: 'body' };

/** The error schema every refusal uses (a component of `/openapi.json`). */
const errorSchema = z
  .object({
    error: z.string().describe('Error code, e.g. invalid_request, invalid_token, insufficient_scope'),
    error_description: z.string().optional(),
    issues: z
      .array(z.object({ path: z.string().describe('e.g. body.title'), message: z.string() }))
      .optional()
      .describe('Each invalid field, located'),
  })
  .openapi('Error');

const WWW_AUTHENTICATE = {
  'WWW-Authenticate': {
    description: 'Bearer challenge naming the protected resource metadata (RFC 6750 §3, RFC 9728 §5.1)',
    schema: { type: 'string' as const },
  },
};

const refusal = (description: string, withChallenge = false) => ({
  description,
  ...(withChallenge ? { headers: WWW_AUTHENTICATE } : {}),
  content: { 'application/json': { schema: errorSchema } },
});

const ACCESS_TEXT = {
  public: 'Anyone: without a token the caller is anonymous and sees public records only.',
  user: 'A signed-in user (token required).',
  owner: 'The school owner (token required).',
} as const;

/**
 * THE authorization check of every business route: the route's one declared scope goes to the
 * library's guard (`required` unless the route is public), then the route's role rule applies.
 * The guard's refusals (401, 403 with `WWW-Authenticate`) are returned as the library made them.
 */
export function authorize(
  guard: BearerGuard,
  route: ApiRoute,
  services: ApiServices,
): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    // Method, URL and DPoP header too: a DPoP-bound token's proof is checked against them.
    const result = await guard.check(
      {
        headers: { authorization: c.req.header('authorization'), dpop: c.req.header('dpop') },
        method: c.req.method,
        url: c.req.url,
      },
      { scope: route.scope, required: route.access !== 'public' },
    );
    if (!result.ok) return toResponse(result.response);
    const principal = result.principal;
    let user = null;
    if (!principal.anonymous) {
      user = await services.data.getUser(principal.subject);
      if (user === null)
        throw new ApiError('forbidden', 'the account this token was issued for no longer exists');
      if (route.access === 'owner' && user.role !== 'owner') {
        throw new ApiError('forbidden', 'this operation is reserved to the school owner');
      }
    }
    c.set('caller', { principal, user });
    return next();
  };
}

/** The refusal of a body over `limit` bytes (read to its end first, so the client reads it), or unreadable. */
const refuseBody = (limit: number) => (_c: Context<ApiEnv>, status: BodyRefusal) => {
  throw status === 413
    ? new ApiError('payload_too_large', `the request body is larger than ${limit} bytes`)
    : new ApiError('invalid_request', 'the request body could not be read');
};

/** The `@hono/zod-openapi` route of an operation: documentation and validation in one. */
function openApiRoute(route: ApiRoute, middleware: MiddlewareHandler<ApiEnv>[]): RouteConfig {
  const success = route.response;
  const content = success.schema
    ? { 'application/json': { schema: success.schema } }
    : success.binary
      ? { '*/*': { schema: { type: 'string' as const, format: 'binary' } } }
      : undefined;
  const body = route.body;
  return createRoute({
    method: route.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete',
    path: `${API_PREFIX}${route.path}`,
    operationId: route.operationId,
    summary: route.summary,
    description: `${route.description === undefined ? '' : `${route.description}\n\n`}Scope: \`${route.scope}\`. ${ACCESS_TEXT[route.access]}`,
    tags: [route.family],
    middleware,
    request: {
      ...(route.params === undefined ? {} : { params: route.params as z.ZodObject }),
      // Without a schema of its own, a route takes no query parameters: a typo (`?limt=5`) is an
      // error rather than silently ignored.
      query: (route.query as z.ZodObject | undefined) ?? z.strictObject({}),
      ...(body === undefined
        ? {}
        : {
            body: {
              required: true,
              content:
                body.kind === 'json'
                  ? { 'application/json': { schema: body.schema } }
                  : {
                      '*/*': {
                        schema: { type: 'string' as const, format: 'binary', description: body.description },
                      },
                    },
            },
          }),
    },
    responses: {
      [success.status]: { description: success.description, ...(content === undefined ? {} : { content }) },
      400: refusal('Invalid request: `issues` lists each problem with its location'),
      401: refusal(
        route.access === 'public'
          ? 'Invalid, expired or revoked token (`invalid_token`); no token is served as anonymous'
          : 'No token, or an invalid one (`invalid_token`)',
        true,
      ),
      403: refusal(
        route.access === 'owner'
          ? 'The token lacks the scope (`insufficient_scope`), or its user is not the school owner (`forbidden`)'
          : 'The token lacks the scope (`insufficient_scope`)',
        true,
      ),
      ...(route.params === undefined ? {} : { 404: refusal('No such record, or not visible to the caller') }),
      ...(body === undefined
        ? {}
        : { 413: refusal('The body is too large'), 415: refusal('Unsupported Content-Type') }),
    },
    security: route.access === 'public' ? [{}, { oauth2: [route.scope] }] : [{ oauth2: [route.scope] }],
    'x-scope': route.scope,
    'x-access': route.access,
  });
}

/** The validated inputs, read back from Hono (the schemas that validated them type them). */
function validated(c: Context<ApiEnv>, target: 'param' | 'query' | 'json'): unknown {
  return (c.req as unknown as { valid(target: string): unknown }).valid(target);
}

/**
 * Creates the API app: every operation of `routes`, and errors in the shape of {@link errorResponse}.
 *
 * @param routes - the route table
 * @param deps - the guard and the services handlers use
 */
export function createApiApp(routes: readonly ApiRoute[], deps: ApiAppDeps): OpenAPIHono<ApiEnv> {
  const app = new OpenAPIHono<ApiEnv>({
    defaultHook: (result) => {
      if (!result.success)
        throw invalidRequest(issuesOf(WHERE[result.target] ?? result.target, result.error));
    },
  });
  for (const route of routes) {
    const middleware: MiddlewareHandler<ApiEnv>[] = [authorize(deps.guard, route, deps.services)];
    if (route.body !== undefined) {
      const limit = route.body.kind === 'json' ? MAX_JSON_BYTES : route.body.maxBytes;
      middleware.push(bodyWithin(limit, refuseBody(limit)));
    }
    app.openapi(openApiRoute(route, middleware), async (c) => {
      let raw: { bytes: Uint8Array; mediaType: string } | undefined;
      if (route.body?.kind === 'binary') {
        const bytes = new Uint8Array(await c.req.arrayBuffer());
        if (bytes.length === 0)
          throw invalidRequest([{ path: 'body', message: 'the file content is required' }]);
        const type = c.req.header('content-type') ?? 'application/octet-stream';
        raw = { bytes, mediaType: type.split(';', 1)[0]!.trim().toLowerCase() };
      }
      return route.handler({
        params: route.params === undefined ? {} : validated(c, 'param'),
        query: validated(c, 'query'),
        body: route.body?.kind === 'json' ? validated(c, 'json') : undefined,
        raw,
        caller: c.get('caller'),
        services: deps.services,
      });
    });
  }
  app.onError((error, c) => {
    return errorResponse(error, logFailure(c.req.method, c.req.path, error));
  });
  return app;
}
