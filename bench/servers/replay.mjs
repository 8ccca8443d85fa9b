/**
 * The floor of one workload on its own bytes: a bare `node:http` server that answers each request
 * of a recorded operation with the response the reference server gave it, byte for byte (status,
 * headers, body), reading the request's body first, and doing nothing else. What it costs per
 * operation is what the workload's HTTP requests cost on this machine and Node, without any logic.
 *
 * Environment: `PORT` (required), `HOST` (127.0.0.1), `REPLAY_FILE` (required): a JSON array of
 * `{ method, path, status, headers, body }`, one per request of the operation; a request is matched
 * by its method and path without the query. Prints `replay listening on <url>`.
 * @module
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('PORT must be a port number');
const file = process.env.REPLAY_FILE;
if (file === undefined) throw new Error('REPLAY_FILE must name the recorded exchanges');

/** @param {string} method @param {string} path */
const keyOf = (method, path) => `${method} ${path.split('?')[0]}`;

/** @type {Map<string, { status: number, headers: Record<string, string | string[]>, body: Buffer }>} */
const answers = new Map();
for (const exchange of JSON.parse(readFileSync(file, 'utf8'))) {
  answers.set(keyOf(exchange.method, exchange.path), {
    status: exchange.status,
    headers: exchange.headers,
    body: Buffer.from(exchange.body),
  });
}

const server = createServer((req, res) => {
  const answer = answers.get(keyOf(req.method ?? '', req.url ?? ''));
  req.on('data', () => {});
  req.on('end', () => {
    if (answer === undefined) {
      res.writeHead(404, { 'content-length': 0 });
      res.end();
      return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  });
});
server.listen(port, host, () => console.log(`replay listening on http://${host}:${port}`));
process.once('SIGTERM', () => process.exit(0));
process.once('SIGINT', () => process.exit(0));
