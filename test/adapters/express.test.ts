/**
 * The Express router behind body parsers: a body a parser already read is refused with a message
 * for the operator (and one warning), never re-encoded from what the parser made of it; raw bytes a
 * parser kept are read instead. `code[]=x` through `express.urlencoded({ extended: true })` must
 * never redeem the code `x` (ATK-31, ATK-32).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createExpressRouter } from '../../src/adapters/express.js';
import { form, Harness, json } from '../helpers/harness.js';
import { rawHttp, type TestRequest } from '../helpers/transports.js';

let h: Harness;
const servers: Server[] = [];

beforeAll(async () => {
  h = await Harness.start();
});

afterAll(async () => {
  for (const http of servers) {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  }
  await h.close();
});

/** An app with `middleware` mounted before the router, over real HTTP: returns a sender. */
async function app(
  ...middleware: RequestHandler[]
): Promise<(request: TestRequest) => ReturnType<typeof rawHttp>> {
  const application = express();
  for (const m of middleware) application.use(m);
  application.use(createExpressRouter(h.server));
  const http = application.listen(0, '127.0.0.1');
  servers.push(http);
  await new Promise<void>((resolve) => http.once('listening', resolve));
  const port = (http.address() as AddressInfo).port;
  return (request) => rawHttp(port, request);
}

/** A code issued to a fresh client, and the token request that redeems it with `code` renamed. */
async function codeRequest(
  codeParameter: string,
): Promise<{ request: TestRequest; redeem: () => Promise<number> }> {
  const client = await h.register();
  const { code, pkce } = await h.obtainCode(client);
  const params = {
    grant_type: 'authorization_code',
    redirect_uri: client.redirect_uris[0],
    client_id: client.client_id,
    code_verifier: pkce.verifier,
  };
  return {
    request: {
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `${form(params)}&${codeParameter}=${encodeURIComponent(code)}`,
    },
    redeem: async () => (await h.exchange(client, code, pkce)).status,
  };
}

const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);
process.on('warning', onWarning);
afterEach(() => {
  warnings.length = 0;
});
afterAll(() => {
  process.off('warning', onWarning);
});

describe('createExpressRouter after body parsers that keep nothing', () => {
  it('refuses code[]=x read by urlencoded({ extended: true }) and leaves the code unredeemed (ATK-31)', async () => {
    const send = await app(express.urlencoded({ extended: true }));
    const { request, redeem } = await codeRequest('code[]');
    const answer = await send(request);
    expect(answer.status).toBe(400);
    expect(json(answer)).toEqual({
      error: 'invalid_request',
      error_description:
        'the request body was read before it reached the authorization server: mount the authorization server before any body parser',
    });
    // The code was never redeemed through the parser's `code=x`: it still works once.
    expect(await redeem()).toBe(200);
  });

  it('refuses a JSON registration read by express.json(), and warns the operator once (PORTCULLIS_BODY_ALREADY_READ)', async () => {
    const send = await app(express.json());
    const registration: TestRequest = {
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:49152/cb'] }),
    };
    for (let i = 0; i < 3; i++) expect((await send(registration)).status).toBe(400);
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    expect(warnings.map((w) => [w.name, (w as Error & { code?: string }).code])).toEqual([
      ['PortcullisWarning', 'PORTCULLIS_BODY_ALREADY_READ'],
    ]);
    expect(warnings[0]!.message).toMatch(/mount its router or handler before any body parser/);
  });

  it('serves requests the parsers left alone: GET, and bodies of types they do not read', async () => {
    const send = await app(express.json());
    expect((await send({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).status).toBe(200);
    const { request, redeem } = await codeRequest('code');
    expect((await send(request)).status).toBe(200); // a form body: express.json() does not read it
    expect(await redeem()).toBe(400); // and the code is now used
  });
});

describe('createExpressRouter after body parsers that keep the raw body', () => {
  const verify = (req: IncomingMessage & { rawBody?: Buffer }, _res: unknown, buffer: Buffer) => {
    req.rawBody = buffer;
  };

  it('reads req.rawBody, so code[]=x is refused by the core as sent (ATK-31)', async () => {
    const send = await app(express.urlencoded({ extended: true, verify }));
    const { request, redeem } = await codeRequest('code[]');
    const answer = await send(request);
    expect(answer.status).toBe(400);
    expect(json(answer).error).toBe('invalid_request');
    expect(json(answer).error_description).not.toMatch(/body parser/);
    expect(await redeem()).toBe(200);
  });

  it('redeems a code sent through urlencoded({ extended: true }) with the raw body kept', async () => {
    const send = await app(express.urlencoded({ extended: true, verify }));
    const { request, redeem } = await codeRequest('code');
    expect((await send(request)).status).toBe(200);
    expect(await redeem()).toBe(400);
  });

  it('reads the Buffer that express.raw() leaves in req.body', async () => {
    const send = await app(express.raw({ type: '*/*' }));
    const answer = await send({
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'raw', redirect_uris: ['http://127.0.0.1:49152/cb'] }),
    });
    expect(answer.status).toBe(201);
    expect(json(answer).client_name).toBe('raw');
  });

  it('still applies maxBodyBytes to a raw body a parser kept (413)', async () => {
    const send = await app(express.json({ verify, limit: '1mb' }));
    const answer = await send({
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'x'.repeat(100 * 1024),
        redirect_uris: ['http://127.0.0.1:49152/cb'],
      }),
    });
    expect(answer.status).toBe(413);
  });
});
