/**
 * The app on Node, served by `@hono/node-server` (which turns `node:http` requests into Fetch
 * `Request`s): `PORT=3000 node examples/runtimes/node.ts` on Node 22.18+ after `npm run build`.
 */
// #region serve
import { serve } from '@hono/node-server';
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3000);
const issuer = process.env.ISSUER ?? `http://127.0.0.1:${port}`;
const app = await createApp({ issuer });
serve({ fetch: app.fetch, hostname: '127.0.0.1', port }, () => console.log(`listening on ${issuer}`));
// #endregion serve
