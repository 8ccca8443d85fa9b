/**
 * The guide docs/writing-an-adapter.md shows two adapters (docs/snippets/writing-an-adapter.ts):
 * Hono middleware over the Fetch entry and an AWS Lambda handler over `server.handle()`. Both keep
 * the rules the guide lists: raw body bytes, the body limit, a repeated Authorization refused, the
 * client address passed, other paths left to the host.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HttpBindings, serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LambdaEvent, lambdaHandler, oauthMiddleware } from '../../docs/snippets/writing-an-adapter.js';
import type { OAuthRequest } from '../../src/core/http.js';
import type { AuthorizationServer } from '../../src/server.js';
import { CB, Harness } from '../helpers/harness.js';
import { rawHttp } from '../helpers/transports.js';

let h: Harness;
const received: OAuthRequest[] = [];
/** The started server, with its requests recorded on the way to the core. */
let recording: AuthorizationServer;
const registration = JSON.stringify({ client_name: 'guide', redirect_uris: [CB] });

beforeAll(async () => {
  h = await Harness.start();
  recording = {
    ...h.server,
    handle: (request) => {
      received.push(request);
      return h.server.handle(request);
    },
  };
});
afterAll(async () => {
  await h.close();
});

describe('the Hono middleware of the guide', () => {
  let http: Server;
  let port = 0;

  beforeAll(async () => {
    const app = new Hono<{ Bindings: HttpBindings }>();
    app.use(oauthMiddleware(recording));
    app.get('/hello', (c) => c.text('the app'));
    http = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
    await new Promise<void>((resolve) => (http.listening ? resolve() : http.once('listening', resolve)));
    port = (http.address() as AddressInfo).port;
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  it("serves the server's paths with the socket's address, and leaves the rest to the app", async () => {
    const registered = await rawHttp(port, {
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: registration,
    });
    expect(registered.status).toBe(201);
    expect(received.at(-1)?.remoteAddress).toBe('127.0.0.1');
    expect((await rawHttp(port, { method: 'GET', url: '/hello' })).body).toBe('the app');
  });
});

describe('the Lambda adapter of the guide', () => {
  let handler: ReturnType<typeof lambdaHandler>;
  beforeAll(() => {
    handler = lambdaHandler(recording);
  });
  const event = (overrides: Partial<LambdaEvent>): LambdaEvent => ({
    rawPath: '/api/oauth/register',
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    body: registration,
    isBase64Encoded: false,
    requestContext: { http: { method: 'POST', sourceIp: '192.0.2.10' } },
    ...overrides,
  });

  it('registers a client from a plain and from a base64 body, with the source IP as the address', async () => {
    expect((await handler(event({}))).statusCode).toBe(201);
    expect(received.at(-1)?.remoteAddress).toBe('192.0.2.10');
    const encoded = event({ body: Buffer.from(registration).toString('base64'), isBase64Encoded: true });
    expect((await handler(encoded)).statusCode).toBe(201);
  });

  it('refuses a repeated Authorization header that API Gateway joined with a comma (RFC 6749 §2.3)', async () => {
    const result = await handler(
      event({
        rawPath: '/api/oauth/introspect',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: 'Basic b25lOjE=,Basic dHdvOjI=',
        },
        body: 'token=x',
      }),
    );
    expect([result.statusCode, JSON.parse(result.body).error]).toEqual([400, 'invalid_request']);
  });

  it('answers 413 to a body over maxBodyBytes, and 404 to a path that is not the server', async () => {
    const big = JSON.stringify({ redirect_uris: [CB], client_name: 'x'.repeat(h.server.maxBodyBytes) });
    expect((await handler(event({ body: big }))).statusCode).toBe(413);
    expect((await handler(event({ rawPath: '/elsewhere' }))).statusCode).toBe(404);
  });
});
