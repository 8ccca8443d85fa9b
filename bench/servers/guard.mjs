/**
 * The guard benchmark's server: the library from the built `dist/`, memory storage, and two
 * routes with the same JSON body, `/api/x` behind the resource-server guard (`courses:read`,
 * token required, verified against the server's storage as the reference server does) and
 * `/api/x-open` without it. The difference between the two is the guard's cost.
 *
 * The user is always signed in (no login page): the benchmark gets its tokens through the normal
 * code flow, consent page included.
 *
 * Environment: `PORT` (required), `HOST` (127.0.0.1). Prints `guard listening on <url>`.
 * @module
 */
import { createServer } from 'node:http';
import {
  createAuthorizationServer,
  createScopePolicy,
  defineScopes,
  memoryStorage,
  oidcScopes,
} from '../../dist/index.js';
import { guardNodeRequest, toNodeHandler } from '../../dist/node.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('PORT must be a port number');
const issuer = `http://${host}:${port}`;

const signedInAt = Math.floor(Date.now() / 1000);
const oauth = await createAuthorizationServer({
  issuer,
  storage: memoryStorage(),
  scopePolicy: createScopePolicy({
    registry: defineScopes([...oidcScopes, { name: 'courses:read', description: 'Read access to courses' }]),
  }),
  async authenticate() {
    return { id: 'ada', authTime: signedInAt, sessionId: 'bench', name: 'ada@example.com' };
  },
  async claims() {
    return { name: 'Ada Lovelace', email: 'ada@example.com', email_verified: true };
  },
});
const guard = oauth.guard({ resource: issuer });
const oauthHandler = toNodeHandler(oauth);

/**
 * @param {import('node:http').ServerResponse} res
 * @param {string} sub
 */
function answer(res, sub) {
  const body = JSON.stringify({ ok: true, sub });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path === '/api/x') {
    guardNodeRequest(guard, req, res, { scope: 'courses:read', required: true }).then(
      (principal) => {
        if (principal !== null) answer(res, principal.anonymous ? '' : principal.subject);
      },
      (error) => {
        console.error('guard failed:', error);
        res.writeHead(500).end();
      },
    );
    return;
  }
  if (path === '/api/x-open') {
    answer(res, 'ada');
    return;
  }
  if (oauth.matches(path)) {
    void oauthHandler(req, res);
    return;
  }
  res.writeHead(404).end();
});
server.listen(port, host, () => console.log(`guard listening on ${issuer}`));
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
    oauth.close().finally(() => process.exit(0));
  });
}
