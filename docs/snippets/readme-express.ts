// #region quick-start
import express from 'express';
import {
  createAuthorizationServer,
  createScopePolicy,
  defineScopes,
  memoryStorage,
  oidcScopes,
} from 'portcullis';
import { createExpressRouter } from 'portcullis/express';

/** Your session store: the signed-in user of a request's cookie, if any. */
declare function currentUser(cookie: string | undefined): { id: string; signedInAt: number } | undefined;

// Resolves once the storage is reached and the signing keys are loaded; rejects with what failed.
const oauth = await createAuthorizationServer({
  issuer: 'http://127.0.0.1:3000',
  storage: memoryStorage(), // tests and demos; SQLite (one host) or PostgreSQL in production
  scopePolicy: createScopePolicy({
    registry: defineScopes([...oidcScopes, { name: 'notes:read', description: 'Read your notes' }]),
  }),
  // Who is signed in, from your own session cookie; null sends the browser to loginUrl.
  authenticate: (request) => {
    const user = currentUser(request.headers.cookie);
    return user === undefined ? null : { id: user.id, authTime: user.signedInAt };
  },
  loginUrl: '/login', // your login page; it gets ?return_to=... to resume the request
});

const app = express();
app.use(createExpressRouter(oauth)); // mount before any body parser
app.listen(3000, '127.0.0.1');
// #endregion quick-start
