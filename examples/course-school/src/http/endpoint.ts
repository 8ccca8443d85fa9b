/**
 * What a server endpoint receives and returns. An endpoint returns a response to write, or
 * `undefined` when it wrote the response itself (the MCP transport streams its own).
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpResponse } from './response.js';

/** A routed request. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The path, without the query. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Path parameters of the matched pattern, decoded. */
  readonly params: Readonly<Record<string, string>>;
}

/** An endpoint. */
export type Endpoint = (context: RequestContext) => Promise<HttpResponse | undefined>;

/**
 * True when a form POST comes from another origin, by Fetch Metadata (`Sec-Fetch-Site`) or else by
 * `Origin`. This backs up the CSRF token, which stays the primary defence. Our pages send
 * `Referrer-Policy: no-referrer`, under which browsers post `Origin: null`: that value proves
 * nothing either way, so it is left to the token.
 */
export function crossSite(req: IncomingMessage, issuer: string): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = req.headers.origin;
  return origin !== undefined && origin !== 'null' && origin !== new URL(issuer).origin;
}
