/**
 * The smallest Fetch host: a Hono app whose other paths go to the authorization server's Fetch
 * handler, served on Node with `@hono/node-server`. The same `app.fetch` runs unchanged on Bun,
 * Deno and Cloudflare Workers.
 *
 * Run it (after `npm run build`, on Node 22.18+ which runs TypeScript directly):
 * `node examples/minimal-hono/server.ts`, then
 * `curl http://127.0.0.1:3000/.well-known/oauth-authorization-server`.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { type AuthorizationServer, createAuthorizationServer, memoryStorage } from 'portcullis';
import { createFetchHandler } from 'portcullis/fetch';

/** The app and the authorization server it serves. */
export interface ExampleApp {
  readonly app: Hono;
  readonly oauth: AuthorizationServer;
}

// #region create-app
/** Builds the app, its authorization server started. `issuer` is the public origin the server is reached at. */
export async function createApp(issuer = 'http://127.0.0.1:3000'): Promise<ExampleApp> {
  const oauth = await createAuthorizationServer({ issuer, storage: memoryStorage() });
  const handleOAuth = createFetchHandler(oauth);
  const app = new Hono();
  app.get('/', (c) => c.text('An app with an OAuth 2.1 authorization server.\n'));
  // Registered last: the authorization server answers its endpoints and a JSON 404 for the rest.
  app.all('*', (c) => handleOAuth(c.req.raw));
  return { app, oauth };
}
// #endregion create-app

if (import.meta.url === `file://${process.argv[1]}`) {
  const { app } = await createApp();
  serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 3000 }, (info) => {
    console.log(`listening on http://127.0.0.1:${info.port}`);
  });
}
