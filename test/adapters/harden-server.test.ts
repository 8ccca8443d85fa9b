/**
 * ABU-08: `hardenServer` gives a `node:http` server a header timeout, a request timeout, a
 * keep-alive timeout and a connection cap. Each limit is shown cutting what it is for (a trickled
 * body, trickled headers, an idle connection, one connection too many), with small values.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hardenServer, toNodeHandler } from '../../src/adapters/node.js';
import { Harness } from '../helpers/harness.js';
import { RawConnection, rawRequest } from './raw-connection.js';

let h: Harness;
const servers: Server[] = [];

beforeAll(async () => {
  h = await Harness.start();
});

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

afterAll(async () => {
  await h.close();
});

async function start(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Writes one byte every `everyMs` until the connection closes; resolves with how many were written. */
function trickle(c: RawConnection, bytes: string, everyMs: number): Promise<number> {
  return new Promise((resolve) => {
    let sent = 0;
    const timer = setInterval(() => {
      if (sent === bytes.length || c.socket.destroyed || !c.socket.writable) return;
      c.socket.write(bytes[sent++]!);
    }, everyMs);
    c.socket.once('close', () => {
      clearInterval(timer);
      resolve(sent);
    });
  });
}

const SMALL = { headersTimeoutMs: 200, requestTimeoutMs: 400, keepAliveTimeoutMs: 100 };

describe('hardenServer (ABU-08)', () => {
  it('applies the documented defaults: 10 s for headers, 30 s for a request, 5 s keep-alive, 1,024 connections', () => {
    const server = hardenServer(createServer());
    expect({
      headersTimeout: server.headersTimeout,
      requestTimeout: server.requestTimeout,
      keepAliveTimeout: server.keepAliveTimeout,
      maxConnections: server.maxConnections,
    }).toEqual({
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
      maxConnections: 1_024,
    });
  });

  it('cuts a trickled body at requestTimeoutMs with 408 Request Timeout (RFC 9110 §15.5.9)', async () => {
    const port = await start(hardenServer(createServer(toNodeHandler(h.server)), SMALL));
    const c = new RawConnection(port);
    const body = 'grant_type=refresh_token&refresh_token=' + 'x'.repeat(200);
    await c.write(
      rawRequest('POST', '/api/oauth/token', {
        'Content-Type': 'application/x-www-form-urlencoded',
        'Content-Length': body.length,
      }),
    );
    const written = trickle(c, body, 20);
    expect((await c.response()).status).toBe(408);
    await c.closed();
    expect(await written).toBeLessThan(body.length);
  });

  it('cuts trickled headers at headersTimeoutMs with 408 (slowloris)', async () => {
    const port = await start(hardenServer(createServer(toNodeHandler(h.server)), SMALL));
    const c = new RawConnection(port);
    const headers =
      'GET /.well-known/jwks.json HTTP/1.1\r\nHost: 127.0.0.1\r\n' + 'X-Slow: y\r\n'.repeat(100);
    const written = trickle(c, headers, 10);
    expect((await c.response()).status).toBe(408);
    await c.closed();
    expect(await written).toBeLessThan(headers.length);
  });

  it('closes a keep-alive connection idle for keepAliveTimeoutMs', async () => {
    const port = await start(hardenServer(createServer(toNodeHandler(h.server)), SMALL));
    const c = new RawConnection(port);
    await c.write(rawRequest('GET', '/.well-known/jwks.json', {}));
    const answer = await c.response();
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('keep-alive');
    await c.closed();
  });

  it('refuses a connection beyond maxConnections, and serves again once one closes', async () => {
    const server = hardenServer(createServer(toNodeHandler(h.server)), { maxConnections: 2 });
    const port = await start(server);
    const accepted: Socket[] = [];
    const connected = (count: number) =>
      new Promise<void>((resolve) => {
        const onConnection = (socket: Socket) => {
          accepted.push(socket);
          if (accepted.length === count) {
            server.off('connection', onConnection);
            resolve();
          }
        };
        server.on('connection', onConnection);
      });
    const two = connected(2);
    const first = new RawConnection(port);
    const second = new RawConnection(port);
    await two;

    const dropped = new Promise<void>((resolve) => server.once('drop', () => resolve()));
    const third = new RawConnection(port);
    await dropped;
    await third.closed();

    first.close();
    await new Promise<void>((resolve) => accepted[0]!.once('close', () => resolve()));
    const fourth = new RawConnection(port);
    await fourth.write(rawRequest('GET', '/.well-known/jwks.json', {}));
    expect((await fourth.response()).status).toBe(200);
    second.close();
    fourth.close();
  });

  it.each([
    [{ headersTimeoutMs: 0 }, /headersTimeoutMs must be a positive integer/],
    [{ requestTimeoutMs: 1.5 }, /requestTimeoutMs must be a positive integer/],
    [{ keepAliveTimeoutMs: -1 }, /keepAliveTimeoutMs must be a positive integer/],
    [{ maxConnections: Number.POSITIVE_INFINITY }, /maxConnections must be a positive integer/],
    [{ headersTimeoutMs: 20_000, requestTimeoutMs: 10_000 }, /must not exceed requestTimeoutMs/],
  ])('throws RangeError for %o', (options, message) => {
    expect(() => hardenServer(createServer(), options)).toThrow(RangeError);
    expect(() => hardenServer(createServer(), options)).toThrow(message);
  });
});
