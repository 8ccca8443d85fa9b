/**
 * The smallest Express host: an authorization server with in-memory storage, mounted at the root
 * of an Express app next to the app's own routes.
 *
 * Run it (after `npm run build`, on Node 22.18+ which runs TypeScript directly):
 * `node examples/minimal-express/server.ts`, then
 * `curl http://127.0.0.1:3000/.well-known/oauth-authorization-server`.
 */
import express, { type Express } from 'express';
import { type AuthorizationServer, createAuthorizationServer, memoryStorage } from 'portcullis';
import { createExpressRouter } from 'portcullis/express';

/** The app and the authorization server it mounts. */
export interface ExampleApp {
  readonly app: Express;
  readonly oauth: AuthorizationServer;
}

// #region create-app
/** Builds the app, its authorization server started. `issuer` is the public origin the server is reached at. */
export async function createApp(issuer = 'http://127.0.0.1:3000'): Promise<ExampleApp> {
  const oauth = await createAuthorizationServer({ issuer, storage: memoryStorage() });
  const app = express();
  // Mount before any body parser: the router reads the raw body itself.
  app.use(createExpressRouter(oauth));
  app.get('/', (_req, res) => {
    res.type('text').send('An app with an OAuth 2.1 authorization server.\n');
  });
  return { app, oauth };
}
// #endregion create-app

if (import.meta.url === `file://${process.argv[1]}`) {
  const { app } = await createApp();
  app.listen(3000, '127.0.0.1', () => {
    console.log('listening on http://127.0.0.1:3000');
  });
}
