/**
 * Runs a business operation: authorize (guard + role), read and validate inputs, call the
 * handler. Validation failures are 400s listing every problem with its location
 * (`query.limit`, `body.title`), so a developer can fix the request in one go.
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { nodeHeaders } from 'portcullis/node';
import type { z } from 'zod';
import type { BearerGuard } from '../auth/bearer-guard.js';
import { MAX_JSON_BYTES, mediaTypeOf, readBody, readJson } from '../http/body.js';
import { HttpError, type HttpResponse, type Issue } from '../http/response.js';
import type { ApiRoute, ApiServices, Caller } from './route.js';

/** The outcome of {@link authorizeRoute}. */
export type Authorization =
  | { readonly ok: true; readonly caller: Caller }
  | { readonly ok: false; readonly response: HttpResponse };

/**
 * THE authorization check of every business route: the route's one declared scope goes to the
 * library's guard (`required` unless the route is public), then the route's role rule applies.
 *
 * @param guard - the guard of resource `$ISSUER`
 * @param req - the request
 * @param route - the operation, with its scope and access
 * @param services - to look the token's user up
 */
export async function authorizeRoute(
  guard: BearerGuard,
  req: IncomingMessage,
  route: ApiRoute,
  services: ApiServices,
): Promise<Authorization> {
  const result = await guard.check(
    { headers: nodeHeaders(req) },
    { scope: route.scope, required: route.access !== 'public' },
  );
  if (!result.ok) return { ok: false, response: result.response };
  const principal = result.principal;
  if (principal.anonymous) return { ok: true, caller: { principal, user: null } };
  const user = await services.data.getUser(principal.subject);
  if (user === null) {
    throw new HttpError('forbidden', 'the account this token was issued for no longer exists');
  }
  if (route.access === 'owner' && user.role !== 'owner') {
    throw new HttpError('forbidden', 'this operation is reserved to the school owner');
  }
  return { ok: true, caller: { principal, user } };
}

/** One issue per problem, located (`body.title`); each unknown field is its own issue. */
export function issuesOf(where: string, error: z.ZodError): Issue[] {
  return error.issues.flatMap((issue) => {
    const path = [where, ...issue.path.map(String)];
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: [...path, key].join('.'), message: 'unknown field' }));
    }
    return [{ path: path.join('.'), message: issue.message }];
  });
}

/** Query parameters as an object; a repeated parameter is refused (never silently one of them). */
function queryObject(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of query) {
    if (Object.hasOwn(out, name)) {
      throw new HttpError('invalid_request', `the query parameter ${name} was sent more than once`, {
        issues: [{ path: `query.${name}`, message: 'repeated' }],
      });
    }
    out[name] = value;
  }
  return out;
}

/**
 * Validates the inputs of an authorized request and runs the handler.
 * @throws HttpError 400 with `issues`, 413, 415
 */
export async function runRoute(
  route: ApiRoute,
  req: IncomingMessage,
  params: Readonly<Record<string, string>>,
  query: URLSearchParams,
  caller: Caller,
  services: ApiServices,
): Promise<HttpResponse> {
  const issues: Issue[] = [];
  const parse = (where: string, schema: z.ZodType | undefined, value: unknown): unknown => {
    if (schema === undefined) return undefined;
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    issues.push(...issuesOf(where, result.error));
    return undefined;
  };

  const parsedParams = parse('path', route.params, params);
  const parsedQuery = parse('query', route.query, queryObject(query));
  if (route.query === undefined && query.size > 0) {
    // Unknown query parameters are refused, so a typo (`?limt=5`) is not silently ignored.
    issues.push(
      ...[...query.keys()].map((name) => ({ path: `query.${name}`, message: 'unknown parameter' })),
    );
  }

  let body: unknown;
  let raw: { bytes: Uint8Array; mediaType: string } | undefined;
  if (route.body?.kind === 'json') {
    const value = await readJson(req, MAX_JSON_BYTES);
    if (value === undefined) issues.push({ path: 'body', message: 'a JSON body is required' });
    else body = parse('body', route.body.schema, value);
  } else if (route.body?.kind === 'binary') {
    const bytes = await readBody(req, route.body.maxBytes);
    if (bytes.length === 0) issues.push({ path: 'body', message: 'the file content is required' });
    raw = { bytes, mediaType: mediaTypeOf(req) ?? 'application/octet-stream' };
  }

  if (issues.length > 0) {
    throw new HttpError(
      'invalid_request',
      `the request is invalid: ${issues[0]!.path} ${issues[0]!.message}`,
      {
        issues,
      },
    );
  }
  return route.handler({ params: parsedParams, query: parsedQuery, body, caller, services, raw });
}
