/**
 * The floor of a framework on the bridge: the same small JSON answer as `bare.mjs`, from a Hono
 * app served by `@hono/node-server`, the bridge the library's adapters and the reference server
 * run on (issue 13). Measured beside the bare floor, it shows what the bridge itself costs per
 * request before any handler of ours runs.
 *
 * Environment: `PORT` (required), `HOST` (127.0.0.1). Prints `bridge listening on <url>`.
 * @module
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('PORT must be a port number');

const app = new Hono();
app.get('/', (c) => c.json({ ok: true, sub: 'ada' }));
serve({ fetch: app.fetch, port, hostname: host }, () =>
  console.log(`bridge listening on http://${host}:${port}`),
);
process.once('SIGTERM', () => process.exit(0));
process.once('SIGINT', () => process.exit(0));
