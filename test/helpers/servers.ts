/**
 * Local servers for network tests: an HTTPS server whose routes a test writes, and a canary
 * listener that only counts the connections it accepts (a refused address must see none).
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { TestCertificate } from './tls.js';

export type Route = (request: IncomingMessage, response: ServerResponse) => void;

function listen(server: NetServer | HttpsServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

function closeAll(server: NetServer | HttpsServer, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

export interface TestHttpsServer {
  readonly port: number;
  /** TCP connections accepted so far. */
  readonly connections: () => number;
  /** Paths requested so far. */
  readonly requests: string[];
  /** Replaces the handler of a path. */
  route(path: string, handler: Route): void;
  close(): Promise<void>;
}

/** Starts an HTTPS server on `host` (default 127.0.0.1) with the given certificate. */
export async function startHttpsServer(
  certificate: TestCertificate,
  host = '127.0.0.1',
  port = 0,
): Promise<TestHttpsServer> {
  const routes = new Map<string, Route>();
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createHttpsServer({ key: certificate.key, cert: certificate.cert }, (request, response) => {
    requests.push(request.url ?? '');
    const route = routes.get(request.url ?? '');
    if (route === undefined) {
      response.writeHead(404).end();
      return;
    }
    route(request, response);
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => {});
  const bound = await listen(server, host, port);
  return {
    port: bound,
    connections: () => connections,
    requests,
    route: (path, handler) => routes.set(path, handler),
    close: () => closeAll(server, sockets),
  };
}

export interface Canary {
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: () => number;
  close(): Promise<void>;
}

/** A listener that accepts and counts connections and drops them at once. */
export async function startCanary(host: string, port = 0): Promise<Canary> {
  let accepted = 0;
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.destroy();
  });
  const bound = await listen(server, host, port);
  return { port: bound, accepted: () => accepted, close: () => closeAll(server, sockets) };
}
