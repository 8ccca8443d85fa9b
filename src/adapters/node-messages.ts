/**
 * The node:http side of translation that the Fetch bridge does not cover: the headers of an
 * `IncomingMessage` as the core reads them, and a core response written to a `ServerResponse`.
 * The guard helpers of `resource-server/node.ts` use both; `portcullis/node` exports them.
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OAuthResponse } from '../core/http.js';

/**
 * The headers of a Node request as the core reads them. Node merges or drops repeated headers (it
 * keeps only the first `Authorization`); a repeated credential must be refused (RFC 6750 §2,
 * RFC 6749 §2.3), so the raw list is checked for that one header and both values are kept, joined
 * with `", "` as the Fetch API joins them. Pass this, not `req.headers`, to a guard.
 *
 * @param req - the request
 * @returns lower-case header names to values
 * @see RFC 6750 §2 (one credential per request), RFC 6749 §2.3
 * @group Adapters
 * @example
 * ```ts
 * import type { IncomingMessage } from 'node:http';
 * import type { ResourceGuard } from 'portcullis';
 * import { nodeHeaders } from 'portcullis/node';
 *
 * async function check(guard: ResourceGuard, req: IncomingMessage) {
 *   return guard.check(
 *     { headers: nodeHeaders(req), method: req.method ?? 'GET', url: req.url ?? '/' },
 *     { scope: 'courses:read' },
 *   );
 * }
 * ```
 */
export function nodeHeaders(req: IncomingMessage): Record<string, string | undefined> {
  const headers = req.headers as Record<string, string | undefined>;
  if (headers.authorization === undefined) return headers;
  const raw = req.rawHeaders;
  let seen: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization') {
      if (seen === undefined) seen = raw[i + 1]!;
      else return { ...headers, authorization: `${seen}, ${raw[i + 1]!}` };
    }
  }
  return headers;
}

/**
 * Writes a core response to a Node response: status, headers (plus `content-length`) and body.
 *
 * @param res - the Node response, not yet written to
 * @param response - the core response, e.g. `GuardResult.response` or the result of `server.handle`
 * @param close - add `Connection: close`. Node then closes the connection as soon as the response
 * is written: only for a request whose body was read to its end, or the client may see a reset
 * instead of the response.
 * @see RFC 6750 §3 (the challenges a guard's refusal carries)
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { nodeHeaders, writeResponse } from 'portcullis/node';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const guard = oauth.guard({ resource: 'http://127.0.0.1:3000' });
 * createServer(async (req, res) => {
 *   const result = await guard.check(
 *     { headers: nodeHeaders(req), method: req.method ?? 'GET', url: req.url ?? '/' },
 *     { required: true },
 *   );
 *   if (!result.ok) return writeResponse(res, result.response);
 *   res.end('hello');
 * });
 * ```
 * @group Adapters
 */
export function writeResponse(res: ServerResponse, response: OAuthResponse, close = false): void {
  // A flat `[name, value, ...]` list, which Node writes as it is: no copy of the headers object
  // (about 3 µs less per response). A header the host set before with `setHeader` is still
  // replaced, as with an object. The fields written here replace the response's own.
  const body = response.body;
  const fields: string[] = [];
  for (const name in response.headers) {
    if (name === 'content-length' ? body !== undefined : close && name === 'connection') continue;
    fields.push(name, response.headers[name]!);
  }
  if (close) fields.push('connection', 'close');
  if (body !== undefined) fields.push('content-length', String(Buffer.byteLength(body)));
  res.writeHead(response.status, fields);
  res.end(body);
}
