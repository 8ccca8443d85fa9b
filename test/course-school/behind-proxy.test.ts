/**
 * The reference server behind a real reverse proxy on loopback (ABU-01, ABU-02, REG-12): the proxy
 * appends the address it saw to `X-Forwarded-For`; with `TRUST_PROXY=1` every limit, the library's
 * (registration, 20 an hour per address) and the server's own (login), counts the client the proxy
 * reported, so one client's abuse never refuses another's requests. Without `TRUST_PROXY` the
 * header counts for nothing: a client spoofing it still has one bucket. Clients connect from two
 * source addresses, 127.0.0.2 and 127.0.0.3.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { login, startTestServer } from '../helpers/course-school.js';
import { fetchFrom, type ReverseProxy, startReverseProxy } from '../helpers/reverse-proxy.js';

const clientA = fetchFrom('127.0.0.2');
const clientB = fetchFrom('127.0.0.3');

/** One dynamic registration of a loopback client (RFC 7591). */
function register(
  via: (url: string, init?: RequestInit) => Promise<Response>,
  base: string,
  n: number,
  headers = {},
) {
  return via(`${base}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      client_name: `cli ${n}`,
      redirect_uris: [`http://127.0.0.1:${9000 + n}/callback`],
    }),
  });
}

describe('TRUST_PROXY=1, behind one reverse proxy', () => {
  let app: CourseSchoolServer;
  let proxy: ReverseProxy;

  beforeAll(async () => {
    // The proxy's URL is the public one: the issuer.
    proxy = await startReverseProxy(() => `http://${app.address}`);
    app = await startTestServer({ TRUST_PROXY: '1', ISSUER: proxy.url });
  });
  afterAll(async () => {
    await proxy.close();
    await app.close();
  });

  it('ABU-01 REG-12 one client’s 21st registration in the hour is refused; another client’s first is not', async () => {
    for (let n = 0; n < 20; n++) expect((await register(clientA, proxy.url, n)).status).toBe(201);
    const refused = await register(clientA, proxy.url, 20);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await refused.json()) as Record<string, unknown>).toMatchObject({ error: 'too_many_requests' });
    // The other client, behind the same proxy, is its own bucket.
    expect((await register(clientB, proxy.url, 21)).status).toBe(201);
  });

  it('ABU-01 a stranger’s 20 wrong passwords for ada, through the proxy, do not stop ada logging in from hers', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++)
      statuses.push(
        (await login(proxy.url, 'ada@example.com', `guess-${i}`, undefined, clientA)).response.status,
      );
    expect(statuses.slice(0, 11).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(11).every((s) => s === 429)).toBe(true);
    const ada = await login(proxy.url, 'ada@example.com', 'ada-lovelace', undefined, clientB);
    expect(ada.response.status).toBe(303);
  });

  it('ABU-02 believes only the entry the proxy appended: a client writing its own X-Forwarded-For stays itself', async () => {
    // clientA is over its registration limit (first test); a forged header does not make it someone else.
    const forged = await register(clientA, proxy.url, 22, { 'x-forwarded-for': '198.51.100.77' });
    expect(forged.status).toBe(429);
  });
});

describe('without TRUST_PROXY (the default: the TCP peer is the client)', () => {
  let app: CourseSchoolServer | undefined;
  let proxy: ReverseProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    await app?.close();
    proxy = undefined;
    app = undefined;
  });

  it('ABU-02 a spoofed X-Forwarded-For changes nothing: the 21st registration from one address is refused', async () => {
    app = await startTestServer();
    const base = `http://${app.address}`;
    for (let n = 0; n < 20; n++) {
      const response = await register(clientA, base, n, { 'x-forwarded-for': `198.51.100.${n}` });
      expect(response.status).toBe(201);
    }
    expect((await register(clientA, base, 20, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(429);
    // Another address is unaffected.
    expect((await register(clientB, base, 21)).status).toBe(201);
  });

  it('behind a proxy every client shares the proxy’s address: why TRUST_PROXY must be set there', async () => {
    app = await startTestServer();
    proxy = await startReverseProxy(`http://${app.address}`);
    for (let n = 0; n < 20; n++) expect((await register(clientA, proxy.url, n)).status).toBe(201);
    expect((await register(clientB, proxy.url, 20)).status).toBe(429);
  });
});
