/**
 * The two adapters of docs/writing-an-adapter.md: Hono middleware over the Fetch entry, and an AWS
 * Lambda (API Gateway HTTP API) handler over `server.handle()`. `test/adapters/writing-an-adapter.test.ts`
 * runs both.
 */
import type { HttpBindings } from '@hono/node-server';
import type { MiddlewareHandler } from 'hono';
import type { AuthorizationServer, OAuthRequest } from 'portcullis';
import { createFetchHandler } from 'portcullis/fetch';

// #region hono
/**
 * Hono middleware serving the authorization server's paths; every other path goes on to the app's
 * routes. On Node (`@hono/node-server`) the client address is the socket's.
 */
export function oauthMiddleware(oauth: AuthorizationServer): MiddlewareHandler<{ Bindings: HttpBindings }> {
  const handle = createFetchHandler(oauth, {
    remoteAddress: (_request, env: HttpBindings) => env.incoming.socket.remoteAddress,
  });
  return async (c, next) => {
    if (!oauth.matches(c.req.path)) return next();
    return handle(c.req.raw, c.env);
  };
}
// #endregion hono

// #region lambda
/** The parts of an API Gateway HTTP API (payload 2.0) event and result that an adapter needs. */
export interface LambdaEvent {
  rawPath: string;
  rawQueryString: string;
  /** Lower-case names; API Gateway joins a repeated header with commas. */
  headers: Record<string, string | undefined>;
  body?: string;
  isBase64Encoded: boolean;
  requestContext: { http: { method: string; sourceIp: string } };
}
export interface LambdaResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** A Lambda handler for the authorization server: translation only, around `oauth.handle()`. */
export function lambdaHandler(oauth: AuthorizationServer): (event: LambdaEvent) => Promise<LambdaResult> {
  const tooLarge: LambdaResult = {
    statusCode: 413,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    body: '{"error":"invalid_request","error_description":"the request body is too large"}',
  };
  return async (event) => {
    // The raw bytes the client sent, never a parsed form of them.
    const body =
      event.body === undefined
        ? undefined
        : event.isBase64Encoded
          ? Uint8Array.from(atob(event.body), (c) => c.charCodeAt(0))
          : new TextEncoder().encode(event.body);
    if (body !== undefined && body.byteLength > oauth.maxBodyBytes) return tooLarge;
    const request: OAuthRequest = {
      method: event.requestContext.http.method,
      url: event.rawQueryString === '' ? event.rawPath : `${event.rawPath}?${event.rawQueryString}`,
      headers: event.headers,
      body,
      remoteAddress: event.requestContext.http.sourceIp,
    };
    const response = await oauth.handle(request);
    if (response === null) {
      return {
        statusCode: 404,
        headers: { 'content-type': 'application/json' },
        body: '{"error":"not_found"}',
      };
    }
    return { statusCode: response.status, headers: { ...response.headers }, body: response.body ?? '' };
  };
}
// #endregion lambda
