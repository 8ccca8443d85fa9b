/**
 * Ways to reach a server under test: in-process (`server.handle`) and over real HTTP through each
 * adapter, so one table of scenarios can assert that every adapter behaves identically.
 */
import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import { createExpressRouter } from '../../src/adapters/express.js';
import { createFetchHandler } from '../../src/adapters/fetch.js';
import { toNodeHandler } from '../../src/adapters/node.js';
import type { OAuthRequest } from '../../src/core/http.js';
import type { AuthorizationServer } from '../../src/server.js';

/** What a test sends: headers may repeat (arrays become repeated header lines over HTTP). */
export interface TestRequest {
  method: string;
  url: string;
  headers?: Record<string, string | string[]>;
  body?: string | Uint8Array;
}

/** What a test gets back. */
export interface TestResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Transport {
  readonly name: string;
  send(request: TestRequest): Promise<TestResponse>;
  close(): Promise<void>;
}

/** Calls `server.handle` directly (headers joined as the Fetch API does). */
export function inProcess(server: AuthorizationServer): Transport {
  return {
    name: 'in-process',
    async send(request) {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(request.headers ?? {}))
        headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      const oauthRequest: OAuthRequest = {
        method: request.method,
        url: request.url,
        headers,
        body: request.body,
        remoteAddress: '127.0.0.1',
      };
      const response = await server.handle(oauthRequest);
      if (response === null) return { status: 404, headers: {}, body: '' };
      return { status: response.status, headers: { ...response.headers }, body: response.body ?? '' };
    },
    async close() {},
  };
}

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Sends a raw HTTP request with full control of repeated headers and the Host header. */
export function rawHttp(port: number, request: TestRequest): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: request.method,
        path: request.url,
        headers: request.headers ?? {},
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: flatten(res.headers),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      // The server may close the connection after answering 413 while we are still sending.
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') return;
      reject(error);
    });
    if (request.body !== undefined) req.end(request.body);
    else req.end();
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** An Express app with the router mounted at the root, over real HTTP. */
export async function expressTransport(server: AuthorizationServer): Promise<Transport> {
  const app = express();
  app.use(createExpressRouter(server));
  app.use((_req, res) => {
    res.status(404).json({ error: 'not_found' });
  });
  const http = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => http.once('listening', resolve));
  const port = (http.address() as AddressInfo).port;
  return { name: 'express', send: (request) => rawHttp(port, request), close: () => closeServer(http) };
}

/** The Fetch handler served by @hono/node-server, over real HTTP. */
export async function fetchTransport(server: AuthorizationServer): Promise<Transport> {
  const handler = createFetchHandler(server);
  const http = serve({ fetch: handler, port: 0, hostname: '127.0.0.1' }) as Server;
  await new Promise<void>((resolve) => (http.listening ? resolve() : http.once('listening', resolve)));
  const port = (http.address() as AddressInfo).port;
  return { name: 'fetch', send: (request) => rawHttp(port, request), close: () => closeServer(http) };
}

/** `toNodeHandler` on a bare node:http server. */
export async function nodeTransport(server: AuthorizationServer): Promise<Transport> {
  const { createServer } = await import('node:http');
  const http = createServer(toNodeHandler(server));
  const port = await listen(http);
  return { name: 'node', send: (request) => rawHttp(port, request), close: () => closeServer(http) };
}

/** Every transport, for `describe.each`. */
export const TRANSPORTS = {
  'in-process': async (server: AuthorizationServer) => inProcess(server),
  express: expressTransport,
  fetch: fetchTransport,
  node: nodeTransport,
} as const;
