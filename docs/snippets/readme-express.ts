// #region quick-start
import express from 'express';
import { courseSchoolScopes, createAuthorizationServer, createScopePolicy, memoryStorage } from 'portcullis';
import { createExpressRouter } from 'portcullis/express';

/** Your session store: the signed-in user of a request's cookie, if any. */
declare function currentUser(cookie: string | undefined): { id: string; signedInAt: number } | undefined;

const oauth = createAuthorizationServer({
  issuer: 'http://127.0.0.1:3000',
  storage: memoryStorage(), // tests and demos; SQLite (one host) or PostgreSQL in production
  scopePolicy: createScopePolicy({ registry: courseSchoolScopes }),
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
