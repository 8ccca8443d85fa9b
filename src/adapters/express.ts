/**
 * `portcullis/express`: an Express Router serving an {@link AuthorizationServer}. It only
 * translates, through the node adapter (and so the Fetch entry): Express's body parsers are not
 * needed, and a body they already parsed is refused rather than re-encoded.
 * @module portcullis/express
 */
import { Router } from 'express';
import type { AuthorizationServer } from '../server.js';
import { toNodeHandler } from './node.js';

export { type GuardedRequest, requireToken } from '../resource-server/express.js';

/**
 * Creates an Express Router serving every endpoint and discovery document of `server` at the paths
 * its options give (absolute paths: the router reads `req.originalUrl`). Requests for other paths
 * go on to the next middleware. Errors never escape as exceptions: each endpoint answers its own
 * OAuth error response (see {@link AuthorizationServer.handle}); a body larger than
 * `maxBodyBytes` is answered `413` (`invalid_request`).
 *
 * Mount it before any body parser (`express.json()`, `express.urlencoded()`): it reads the raw body
 * itself, because the OAuth endpoints must see exactly what the client sent (a repeated or
 * bracketed parameter such as `code[]=x` is an error, which a parser would hide). A body a parser
 * already read is answered `400 invalid_request` saying so, and a `PortcullisWarning` is emitted
 * once. If a parser must run first, keep the raw bytes: `express.raw()`, or a `verify` callback
 * storing them in `req.rawBody`; the router then reads those.
 *
 * @param server - the authorization server
 * @returns an Express Router
 * @see RFC 6749 §3 (endpoints), RFC 8414 §3 and RFC 9728 §3 (metadata locations)
 * @example
 * ```ts
 * import express from 'express';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { createExpressRouter } from 'portcullis/express';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const app = express();
 * app.use(createExpressRouter(oauth)); // before express.json() and express.urlencoded()
 * app.use(express.json());
 * app.listen(3000, '127.0.0.1');
 * ```
 * @example
 * ```ts
 * import type { IncomingMessage } from 'node:http';
 * import express from 'express';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { createExpressRouter } from 'portcullis/express';
 *
 * // A parser that must run first keeps the raw bytes for the router.
 * const keepRawBody = (req: IncomingMessage & { rawBody?: Buffer }, _res: unknown, buffer: Buffer) => {
 *   req.rawBody = buffer;
 * };
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const app = express();
 * app.use(express.json({ verify: keepRawBody }), express.urlencoded({ extended: false, verify: keepRawBody }));
 * app.use(createExpressRouter(oauth));
 * ```
 * @group Adapters
 */
export function createExpressRouter(server: AuthorizationServer): Router {
  const router = Router();
  const handler = toNodeHandler(server);
  router.use((req, res, next) => {
    void handler(req, res, next);
  });
  return router;
}
