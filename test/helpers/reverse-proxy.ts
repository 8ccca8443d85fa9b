/**
 * Networking as deployments see it, on loopback: a real reverse proxy (a `node:http` server that
 * forwards every request to an upstream and appends the address it saw to `X-Forwarded-For`, as
 * nginx's `$proxy_add_x_forwarded_for` does), and a `fetch` whose connections leave from a chosen
 * source address (`127.0.0.2`, `127.0.0.3`: Linux routes all of 127.0.0.0/8 to loopback), so that
 * one test can play several clients.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running reverse proxy. */
export interface ReverseProxy {
  /** `http://127.0.0.1:<port>`: where clients connect. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Starts a reverse proxy on 127.0.0.1 in front of `upstream` (`http://host:port`, or a function
 * giving it, for a server started after the proxy whose public URL it is). The request goes on
 * unchanged (method, path, headers, body) but for `X-Forwarded-For`, to which the proxy appends its
 * client's address.
 */
export async function startReverseProxy(upstream: string | (() => string)): Promise<ReverseProxy> {
  const server: Server = createServer((incoming, outgoing) => {
    const target = new URL(typeof upstream === 'string' ? upstream : upstream());
    const seen = incoming.socket.remoteAddress ?? '';
    const prior = incoming.headers['x-forwarded-for'];
    const headers = {
      ...incoming.headers,
      'x-forwarded-for': prior === undefined ? seen : `${prior}, ${seen}`,
    };
    const forwarded = request(
      { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => {
      if (!outgoing.headersSent) outgoing.writeHead(502);
      outgoing.end();
    });
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A `fetch` (the subset the tests use: method, headers, string or URLSearchParams body, no redirects
 * followed) whose TCP connections come from `localAddress`.
 */
export function fetchFrom(localAddress: string): (url: string, init?: RequestInit) => Promise<Response> {
  return (url, init = {}) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const body = init.body === undefined || init.body === null ? undefined : String(init.body);
      const headers = new Headers(init.headers);
      if (init.body instanceof URLSearchParams && !headers.has('content-type')) {
        headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
      }
      if (body !== undefined) headers.set('content-length', String(Buffer.byteLength(body)));
      const plain: Record<string, string> = {};
      headers.forEach((value, name) => {
        plain[name] = value;
      });
      const outgoing = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname + target.search,
          method: init.method ?? 'GET',
          headers: plain,
          localAddress,
          agent: false,
        },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('end', () => {
            const responseHeaders = new Headers();
            for (let i = 0; i < incoming.rawHeaders.length; i += 2) {
              responseHeaders.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!);
            }
            const status = incoming.statusCode ?? 500;
            const content = status === 204 || status === 304 ? null : Buffer.concat(chunks);
            resolve(new Response(content, { status, headers: responseHeaders }));
          });
          incoming.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
}
