/**
 * Request bodies read up to a limit before a route runs: the API's JSON (64 KiB) and uploads
 * (1 MiB), `/mcp` (256 KiB) and the page forms (16 KiB). A larger body is refused `413`, and the
 * client reads that answer (ABU-07): the rest of the body is read and thrown away first (up to
 * 16 MiB, for at most 5 s), as the library's adapters do. Hono's `bodyLimit` answers without
 * reading the rest, so a client that writes its whole request before it reads (Python's
 * http.client, many SDKs) saw EPIPE or a connection that hung instead of the 413 (20 of 20 8 MiB
 * uploads, test/course-school/early-refusal.test.ts). The reading is the library's own:
 * `toOAuthRequest` of `portcullis/fetch`, the Fetch adapter's body reader.
 * @module
 */
import type { Context, Env, MiddlewareHandler } from 'hono';
import { toOAuthRequest } from 'portcullis/fetch';

/**
 * Why a body was refused: `413` larger than the limit, `400` unreadable (the client went away or
 * sent broken chunked framing).
 */
export type BodyRefusal = 413 | 400;

/**
 * A middleware that reads the request body (at most `maxBytes`) and hands it on to the route's
 * validators and handler; a larger or unreadable body gets `refuse`'s answer.
 *
 * @param maxBytes - the largest body accepted
 * @param refuse - the answer to a refused body, in the route's own shape (JSON error, page)
 */
export function bodyWithin<E extends Env>(
  maxBytes: number,
  refuse: (c: Context<E>, status: BodyRefusal) => Response | Promise<Response>,
): MiddlewareHandler<E> {
  return async (c, next) => {
    const read = await toOAuthRequest(c.req.raw, { maxBodyBytes: maxBytes });
    if (!read.ok) return refuse(c, read.response.status === 413 ? 413 : 400);
    // The bytes read, in place of the stream they came from (what Hono's own `bodyLimit` does).
    const body = read.request.body;
    if (body !== undefined) c.req.raw = new Request(c.req.raw, { body: body as BodyInit });
    return next();
  };
}
