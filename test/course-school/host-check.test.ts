/**
 * ABU-06 in the reference server: a Hono middleware refuses, before pages, the business API,
 * `/mcp` and the library's endpoints, a request whose `Host` is not the issuer's (or one of
 * `ALLOWED_HOSTS`): a DNS-rebinding page cannot reach the loopback server's own pages. The
 * loopback issuer of `npm start` keeps answering `localhost` and `127.0.0.1`; behind a proxy, the
 * public host is the issuer's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { startTestServer } from '../helpers/course-school.js';
import { requestWithHost } from '../helpers/host-request.js';

const port = (server: CourseSchoolServer) => Number(server.address.split(':').at(-1));

const ROUTES: readonly [string, string][] = [
  ['GET', '/'],
  ['GET', '/login'],
  ['GET', '/account'],
  ['GET', '/api/courses'],
  ['POST', '/mcp'],
  ['GET', '/auth.md'],
  ['POST', '/oauth/register'],
  ['GET', '/.well-known/oauth-authorization-server'],
];

describe('ABU-06 the reference server on its loopback issuer', () => {
  let app: CourseSchoolServer;
  beforeAll(async () => {
    app = await startTestServer();
  });
  afterAll(() => app.close());

  it('refuses a rebinding host name with 421 on every kind of route', async () => {
    for (const [method, path] of ROUTES) {
      const response = await requestWithHost(port(app), path, `rebind.attacker.example:${port(app)}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expect(response.status, `${method} ${path}`).toBe(421);
      expect(JSON.parse(response.body)).toMatchObject({ error: 'invalid_request' });
    }
  });

  it('answers localhost and 127.0.0.1 alike (npm start opens either)', async () => {
    for (const host of [`localhost:${port(app)}`, `127.0.0.1:${port(app)}`]) {
      expect((await requestWithHost(port(app), '/login', host)).status, host).toBe(200);
      expect((await requestWithHost(port(app), '/.well-known/oauth-authorization-server', host)).status).toBe(
        200,
      );
    }
  });
});

describe('ABU-06 the reference server on an https issuer behind a proxy', () => {
  let app: CourseSchoolServer;
  beforeAll(async () => {
    app = await startTestServer({ ISSUER: 'https://school.example', ALLOWED_HOSTS: '10.0.0.7' });
  });
  afterAll(() => app.close());

  it('answers the public host the proxy forwards, and an allowed health-check host', async () => {
    expect((await requestWithHost(port(app), '/login', 'school.example')).status).toBe(200);
    expect((await requestWithHost(port(app), '/.well-known/jwks.json', '10.0.0.7:3000')).status).toBe(200);
  });

  it('refuses the socket address and loopback names, which are not the issuer', async () => {
    for (const host of [app.address, 'localhost', 'attacker.example']) {
      expect((await requestWithHost(port(app), '/login', host)).status, host).toBe(421);
      expect((await requestWithHost(port(app), '/oauth/token', host, { method: 'POST' })).status, host).toBe(
        421,
      );
    }
  });
});
