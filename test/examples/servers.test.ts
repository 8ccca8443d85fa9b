import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp as createExpressApp } from '../../examples/minimal-express/server.js';
import { createApp as createHonoApp } from '../../examples/minimal-hono/server.js';

/** Starts an example on a free loopback port; returns its origin and a stop function. */
type Start = () => Promise<{ origin: string; stop: () => Promise<void> }>;

const examples: Record<string, Start> = {
  'minimal-express': async () => {
    const { app, oauth } = await createExpressApp('http://127.0.0.1');
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const { port } = server.address() as AddressInfo;
    return {
      origin: `http://127.0.0.1:${port}`,
      stop: async () => {
        await oauth.close();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  },
  'minimal-hono': async () => {
    const { app, oauth } = await createHonoApp('http://127.0.0.1');
    const server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    const { port } = server.address() as AddressInfo;
    return {
      origin: `http://127.0.0.1:${port}`,
      stop: async () => {
        await oauth.close();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  },
};

describe.each(Object.entries(examples))('example %s', (_name, start) => {
  let origin = '';
  let stop = async () => {};
  beforeAll(async () => {
    ({ origin, stop } = await start());
  });
  afterAll(() => stop());

  it("serves the app's own route", async () => {
    const response = await fetch(`${origin}/`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('authorization server');
  });

  it('serves the authorization server metadata (RFC 8414)', async () => {
    const response = await fetch(`${origin}/.well-known/oauth-authorization-server`);
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe('http://127.0.0.1');
    expect(metadata.registration_endpoint).toBe('http://127.0.0.1/oauth/register');
  });

  it('registers a loopback client (RFC 7591)', async () => {
    const response = await fetch(`${origin}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: ['http://127.0.0.1:49152/callback'],
        client_name: 'Example CLI',
      }),
    });
    expect(response.status).toBe(201);
    const client = (await response.json()) as Record<string, unknown>;
    expect(typeof client.client_id).toBe('string');
    expect(client.redirect_uris).toEqual(['http://127.0.0.1:49152/callback']);
  });

  it('answers unknown paths with a 404', async () => {
    expect((await fetch(`${origin}/no-such-page`)).status).toBe(404);
  });
});
