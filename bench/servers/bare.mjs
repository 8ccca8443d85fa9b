/**
 * The floor: a bare `node:http` server answering every request with a small JSON body, the
 * least CPU any server can spend per request on this machine and Node.
 *
 * Environment: `PORT` (required), `HOST` (127.0.0.1). Prints `bare listening on <url>`.
 * @module
 */
import { createServer } from 'node:http';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('PORT must be a port number');

const body = JSON.stringify({ ok: true, sub: 'ada' });
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(port, host, () => console.log(`bare listening on http://${host}:${port}`));
process.once('SIGTERM', () => process.exit(0));
process.once('SIGINT', () => process.exit(0));
