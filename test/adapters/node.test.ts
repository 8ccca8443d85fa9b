/**
 * The node:http adapter on its bridge (@hono/node-server's request listener): request bodies read
 * whole however they arrive, never past the limit, without disturbing keep-alive; the client
 * address taken from the socket; raw headers kept, so a repeated Authorization is refused; paths
 * read from `originalUrl`; a malformed Host or request target answered like any OAuth error.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExpressRouter } from '../../src/adapters/express.js';
import { toNodeHandler } from '../../src/adapters/node.js';
import { writeResponse } from '../../src/adapters/node-messages.js';
import type { OAuthRequest } from '../../src/core/http.js';
import type { AuthorizationServer } from '../../src/server.js';
import { CB, Harness } from '../helpers/harness.js';
import { RawConnection, rawRequest } from './raw-connection.js';

const LIMIT = 1024;
let h: Harness;
/** What the core received, newest last. */
const received: OAuthRequest[] = [];
let server: Server;
let port = 0;

/** The server with its requests recorded on the way to the core. */
function recording(oauth: AuthorizationServer): AuthorizationServer {
  return {
    ...oauth,
    handle: (request) => {
      received.push(request);
      return oauth.handle(request);
    },
  };
}

async function listen(http: Server): Promise<number> {
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return (http.address() as AddressInfo).port;
}

async function stop(http: Server): Promise<void> {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
}

beforeAll(async () => {
  h = await Harness.start({ options: { maxBodyBytes: LIMIT } });
  server = createServer(toNodeHandler(recording(h.server)));
  port = await listen(server);
});

afterAll(async () => {
  await stop(server);
  await h.close();
});

/** The next request the server receives (its headers parsed, its body perhaps still on the way). */
function nextRequest(): Promise<IncomingMessage> {
  return new Promise((resolve) => server.once('request', resolve));
}

const registration = (name: string) => JSON.stringify({ client_name: name, redirect_uris: [CB] });
const post = (body: string | Buffer, headers: Record<string, string | number> = {}) =>
  rawRequest(
    'POST',
    '/api/oauth/register',
    {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      ...headers,
    },
    body,
  );
const chunkedPost = () =>
  rawRequest('POST', '/api/oauth/register', {
    'Content-Type': 'application/json',
    'Transfer-Encoding': 'chunked',
  });
const chunk = (data: string) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;

describe('toNodeHandler: request bodies over node:http', () => {
  it('reads a body sent in the same write as the headers', async () => {
    const c = new RawConnection(port);
    await c.write(post(registration('one write')));
    const answer = await c.response();
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toMatchObject({ client_name: 'one write' });
    c.close();
  });

  it('reads a body that arrives after the headers were parsed, in several writes', async () => {
    const c = new RawConnection(port);
    const body = registration('late body');
    const whole = post(body);
    const headersEnd = whole.indexOf('\r\n\r\n') + 4;
    const arrived = nextRequest();
    await c.write(whole.subarray(0, headersEnd));
    await arrived;
    await c.write(body.slice(0, 10));
    await c.write(body.slice(10));
    const answer = await c.response();
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toMatchObject({ client_name: 'late body' });
    c.close();
  });

  it('reads multi-byte UTF-8 split across writes without corrupting it', async () => {
    const c = new RawConnection(port);
    const bytes = post(registration('Ada ✓ é'));
    const split = bytes.indexOf(Buffer.from('é')) + 1; // between the two bytes of "é"
    const arrived = nextRequest();
    await c.write(bytes.subarray(0, split));
    await arrived;
    await c.write(bytes.subarray(split));
    const answer = await c.response();
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toMatchObject({ client_name: 'Ada ✓ é' });
    c.close();
  });

  it('answers several requests in turn on one keep-alive connection, pipelined ones too', async () => {
    const c = new RawConnection(port);
    for (const name of ['a', 'bb', 'ccc']) {
      await c.write(post(registration(name)));
      expect(JSON.parse((await c.response()).body)).toMatchObject({ client_name: name });
    }
    await c.write(Buffer.concat([post(registration('first')), post(registration('second'))]));
    expect(JSON.parse((await c.response()).body)).toMatchObject({ client_name: 'first' });
    expect(JSON.parse((await c.response()).body)).toMatchObject({ client_name: 'second' });
    c.close();
  });

  it("ends and closes each request stream once its body is read, for listeners of 'end' and 'close'", async () => {
    const c = new RawConnection(port);
    const streams: Promise<string>[] = [];
    for (const name of ['x', 'y']) {
      const request = nextRequest().then(
        (req) =>
          new Promise<string>((resolve) => {
            let ended = false;
            req.once('end', () => {
              ended = true;
            });
            req.once('close', () => resolve(ended ? 'ended, then closed' : 'closed without end'));
          }),
      );
      streams.push(request);
      await c.write(post(registration(name)));
      expect((await c.response()).status).toBe(201);
    }
    expect(await Promise.all(streams)).toEqual(['ended, then closed', 'ended, then closed']);
    c.close();
  });

  it('reads a chunked body under the limit', async () => {
    const c = new RawConnection(port);
    const body = registration('chunked');
    const arrived = nextRequest();
    await c.write(chunkedPost());
    await arrived;
    await c.write(chunk(body.slice(0, 7)));
    await c.write(chunk(body.slice(7)) + '0\r\n\r\n');
    expect(JSON.parse((await c.response()).body)).toMatchObject({ client_name: 'chunked' });
    c.close();
  });

  it('passes an empty body for a POST with Content-Length: 0 (invalid client metadata, RFC 7591 §3.2.2)', async () => {
    const c = new RawConnection(port);
    await c.write(post(''));
    const answer = await c.response();
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_client_metadata' });
    c.close();
  });

  it('answers 413 to a declared length over the limit, reads the rest, and keeps the connection (ABU-07)', async () => {
    const c = new RawConnection(port);
    await c.write(post(registration('x'.repeat(LIMIT))));
    const refused = await c.response();
    expect(refused.status).toBe(413);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid_request' });
    await c.write(post(registration('after the 413')));
    expect(JSON.parse((await c.response()).body)).toMatchObject({ client_name: 'after the 413' });
    c.close();
  });

  it('answers 413 once a chunked body grows past the limit, and keeps the connection (ABU-07)', async () => {
    const c = new RawConnection(port);
    const arrived = nextRequest();
    await c.write(chunkedPost());
    await arrived;
    await c.write(chunk('y'.repeat(LIMIT)));
    await c.write(chunk('y'.repeat(LIMIT)) + '0\r\n\r\n');
    expect((await c.response()).status).toBe(413);
    await c.write(post(registration('after the chunked 413')));
    expect((await c.response()).status).toBe(201);
    c.close();
  });
});

describe('toNodeHandler: what reaches the core', () => {
  it("passes the socket's peer address as the client address (per-address limits, ABU-02)", async () => {
    const c = new RawConnection(port);
    await c.write(rawRequest('GET', '/.well-known/jwks.json', {}));
    expect((await c.response()).status).toBe(200);
    expect(received.at(-1)?.remoteAddress).toBe('127.0.0.1');
    c.close();
  });

  it('keeps both values of a repeated Authorization header, and introspection refuses them (RFC 6749 §2.3, RFC 6750 §2)', async () => {
    const c = new RawConnection(port);
    const basic = (secret: string) => `Basic ${btoa(`client:${secret}`)}`;
    const body = 'token=some-token';
    const request = rawRequest('POST', '/api/oauth/introspect', {
      'Content-Type': 'application/x-www-form-urlencoded',
      'Content-Length': body.length,
    }).toString('latin1');
    // Node keeps only the first Authorization in `req.headers`; the bridge reads the raw list.
    const twice = request.replace(
      '\r\n\r\n',
      `\r\nAuthorization: ${basic('one')}\r\nAuthorization: ${basic('two')}\r\n\r\n`,
    );
    await c.write(twice + body);
    const answer = await c.response();
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_request' });
    expect(received.at(-1)?.headers.authorization).toBe(`${basic('one')}, ${basic('two')}`);
    c.close();
  });

  it('hands the core the headers a Fetch Headers object would list: lower-case names, repeats joined, values trimmed', async () => {
    const c = new RawConnection(port);
    const raw: [string, string][] = [
      ['Host', `127.0.0.1:${port}`],
      ['Content-Type', 'application/json'],
      ['content-type', 'text/plain'],
      ['X-Note', '\tspaced out '],
      ['Cookie', 'a=1'],
      ['Cookie', 'b=2'],
      ['Constructor', 'x'],
    ];
    await c.write(
      `GET /.well-known/oauth-authorization-server HTTP/1.1\r\n${raw.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`,
    );
    expect((await c.response()).status).toBe(200);
    const expected = new Headers();
    for (const [name, value] of raw) expected.append(name, value);
    const listed: Record<string, string> = {};
    expected.forEach((value, name) => {
      listed[name] = value;
    });
    expect(received.at(-1)?.headers).toEqual(listed);
    c.close();
  });

  it('serves a request without a Host header (HTTP/1.0): only the path and query are read', async () => {
    const c = new RawConnection(port);
    await c.write('GET /.well-known/oauth-authorization-server HTTP/1.0\r\n\r\n');
    const answer = await c.response();
    expect(answer.status).toBe(200);
    expect(received.at(-1)?.url).toBe('/.well-known/oauth-authorization-server');
    c.close();
  });

  it('answers a malformed Host header with 400 invalid_request, as JSON', async () => {
    const c = new RawConnection(port);
    await c.write('GET /.well-known/jwks.json HTTP/1.1\r\nHost: example.com/evil\r\n\r\n');
    const answer = await c.response();
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_request' });
    c.close();
  });

  it('passes requests for other paths to next, their bodies unread', async () => {
    const seen: string[] = [];
    const handler = toNodeHandler(h.server);
    const http = createServer((req, res) => {
      void handler(req, res, () => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (data: string) => {
          body += data;
        });
        req.on('end', () => {
          seen.push(body);
          res.writeHead(204).end();
        });
      });
    });
    const otherPort = await listen(http);
    const c = new RawConnection(otherPort);
    await c.write(rawRequest('POST', '/api/other', { 'Content-Length': 5 }, 'hello'));
    expect((await c.response()).status).toBe(204);
    expect(seen).toEqual(['hello']);
    c.close();
    await stop(http);
  });

  it('reads its absolute paths from originalUrl when Express mounts it under a prefix', async () => {
    const app = express();
    app.use('/api', createExpressRouter(h.server));
    const http = createServer(app);
    const appPort = await listen(http);
    const c = new RawConnection(appPort);
    await c.write(post(registration('mounted')));
    const answer = await c.response();
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toMatchObject({ client_name: 'mounted' });
    c.close();
    await stop(http);
  });
});

describe('writeResponse: a core response on a ServerResponse', () => {
  /** Serves one request with `write`, after `prepare` had its say, and returns the raw answer. */
  async function written(
    write: (res: ServerResponse) => void,
    prepare: (res: ServerResponse) => void = () => {},
  ) {
    const http = createServer((req, res) => {
      req.resume();
      prepare(res);
      write(res);
    });
    const c = new RawConnection(await listen(http));
    await c.write(rawRequest('GET', '/', {}));
    const answer = await c.response();
    c.close();
    await stop(http);
    return answer;
  }

  it('writes the status, every header and a Content-Length counted in bytes, not characters', async () => {
    const body = '{"name":"Zoë ✓"}';
    const answer = await written((res) =>
      writeResponse(res, {
        status: 201,
        headers: { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' },
        body,
      }),
    );
    expect(answer.status).toBe(201);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers.pragma).toBe('no-cache');
    expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(answer.body).toBe(body);
  });

  it('replaces what the host set with setHeader under the same name, and keeps its other headers', async () => {
    const answer = await written(
      (res) => writeResponse(res, { status: 200, headers: { 'cache-control': 'no-store' }, body: '{}' }),
      (res) => {
        res.setHeader('Cache-Control', 'public, max-age=600');
        res.setHeader('X-Powered-By', 'host');
      },
    );
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.head.match(/^cache-control:/gim)).toHaveLength(1);
    expect(answer.headers['x-powered-by']).toBe('host');
  });

  it("sends one Content-Length, the body's own, whatever the response's headers said", async () => {
    const answer = await written((res) =>
      writeResponse(res, { status: 200, headers: { 'content-length': '999' }, body: 'four' }),
    );
    expect(answer.head.match(/^content-length:/gim)).toHaveLength(1);
    expect(answer.headers['content-length']).toBe('4');
    expect(answer.body).toBe('four');
  });

  it('adds Connection: close when asked, once, and a redirect without a body has no Content-Length of its own', async () => {
    const closing = await written((res) =>
      writeResponse(res, { status: 200, headers: { connection: 'keep-alive' }, body: '{}' }, true),
    );
    expect(closing.head.match(/^connection:/gim)).toHaveLength(1);
    expect(closing.headers.connection).toBe('close');
    const redirect = await written((res) =>
      writeResponse(res, { status: 302, headers: { location: 'http://127.0.0.1:49152/cb?code=x' } }),
    );
    expect(redirect.status).toBe(302);
    expect(redirect.headers.location).toBe('http://127.0.0.1:49152/cb?code=x');
    expect(redirect.body).toBe('');
  });
});
