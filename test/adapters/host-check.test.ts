/**
 * ABU-06: a request whose `Host` is not the issuer's host (or one of `allowedHosts`) is refused
 * `421` before any endpoint runs, so a DNS-rebinding page (its own host name pointed at the
 * server's address) cannot use the server; a loopback issuer answers every loopback name, so
 * `http://localhost:3000` and `http://127.0.0.1:3000` both keep working in development.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNodeHandler } from '../../src/adapters/node.js';
import { createHostCheck } from '../../src/protocol/host.js';
import { createAuthorizationServer } from '../../src/server.js';
import { memoryStorage } from '../../src/storage/memory.js';
import { CB } from '../helpers/harness.js';
import { requestWithHost } from '../helpers/host-request.js';

async function serve(issuer: string, allowedHosts?: readonly string[]) {
  const oauth = await createAuthorizationServer({
    issuer,
    storage: memoryStorage(),
    ...(allowedHosts === undefined ? {} : { allowedHosts }),
  });
  const http: Server = createServer(toNodeHandler(oauth));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    port,
    async close() {
      await new Promise((resolve) => http.close(resolve));
      await oauth.close();
    },
  };
}

const register = (port: number, host: string) =>
  requestWithHost(port, '/oauth/register', host, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [CB] }),
  });

describe('ABU-06 the Host check, through the node adapter', () => {
  describe('an https issuer', () => {
    let server: Awaited<ReturnType<typeof serve>>;
    beforeAll(async () => {
      server = await serve('https://auth.example.com', ['10.0.0.7']);
    });
    afterAll(() => server.close());

    it('answers requests naming the issuer host, with or without a port, in any case', async () => {
      for (const host of ['auth.example.com', 'AUTH.example.com:443', 'auth.example.com.']) {
        const response = await requestWithHost(server.port, '/.well-known/oauth-authorization-server', host);
        expect(response.status, host).toBe(200);
      }
    });

    it('answers a configured allowed host (a health check by address)', async () => {
      expect((await requestWithHost(server.port, '/.well-known/jwks.json', '10.0.0.7:8080')).status).toBe(
        200,
      );
    });

    it('refuses 421 invalid_request, before the endpoint runs, a request naming another host', async () => {
      for (const host of [
        'attacker.example',
        'auth.example.com.attacker.example',
        '127.0.0.1',
        'localhost',
      ]) {
        const response = await register(server.port, host);
        expect(response.status, host).toBe(421);
        expect(JSON.parse(response.body)).toEqual({
          error: 'invalid_request',
          error_description: 'this server does not answer for the host this request names',
        });
      }
      // Nothing was registered: the same request naming the issuer's host is the first.
      expect((await register(server.port, 'auth.example.com')).status).toBe(201);
    });

    it('refuses a malformed Host', async () => {
      for (const host of ['auth.example.com@attacker.example', 'auth.example.com:99999x']) {
        expect((await requestWithHost(server.port, '/.well-known/jwks.json', host)).status, host).not.toBe(
          200,
        );
      }
    });
  });

  describe('a loopback issuer (npm start)', () => {
    let server: Awaited<ReturnType<typeof serve>>;
    beforeAll(async () => {
      server = await serve('http://127.0.0.1:3000');
    });
    afterAll(() => server.close());

    it('answers 127.0.0.1, localhost and [::1], on any port', async () => {
      for (const host of ['127.0.0.1:3000', 'localhost:3000', '[::1]:3000', `127.0.0.1:${server.port}`]) {
        expect((await register(server.port, host)).status, host).toBe(201);
      }
    });

    it('refuses a DNS-rebinding host name that resolves to loopback', async () => {
      expect((await register(server.port, 'rebind.attacker.example:3000')).status).toBe(421);
    });
  });
});

describe('createHostCheck', () => {
  it('passes a request without Host (an in-process call) and refuses any name when none is configured', () => {
    const allowed = createHostCheck({ issuer: 'https://auth.example.com' });
    expect(allowed(undefined)).toBe(true);
    expect(allowed('')).toBe(false);
    expect(allowed('auth.example.com')).toBe(true);
    expect(allowed('other.example.com')).toBe(false);
  });

  it("'*' turns the check off", () => {
    expect(createHostCheck({ issuer: 'https://auth.example.com', allowedHosts: ['*'] })('any.example')).toBe(
      true,
    );
  });

  it('is applied by the server to in-process requests too', async () => {
    const oauth = await createAuthorizationServer({
      issuer: 'https://auth.example.com',
      storage: memoryStorage(),
    });
    const response = await oauth.handle({
      method: 'GET',
      url: '/.well-known/jwks.json',
      headers: { host: 'attacker.example' },
    });
    expect(response?.status).toBe(421);
    const viaHandler = await oauth.handlers.token({
      method: 'POST',
      url: '/oauth/token',
      headers: { host: 'x.example' },
    });
    expect(viaHandler.status).toBe(421);
    await oauth.close();
  });

  it('refuses a bad allowedHosts entry at start', async () => {
    await expect(
      createAuthorizationServer({
        issuer: 'https://auth.example.com',
        storage: memoryStorage(),
        allowedHosts: ['Auth.example.com:443'],
      }),
    ).rejects.toThrow(/allowedHosts/);
  });
});
