/**
 * ABU-07 through the running reference server: an upload larger than a route accepts is answered
 * `413`, and the client reads it, with `Content-Length` and chunked, keep-alive and
 * `Connection: close`. The uploads come from a client that writes the whole request before it
 * reads (test/helpers/upload-then-read.ts): if the server closed the connection with the body
 * unread, it would see EPIPE or ECONNRESET instead. Three kinds of route: the library's registration
 * endpoint (its node adapter mounted in the Hono app), the business API (64 KiB of JSON, 1 MiB
 * uploads) and the login form (the pages' 16 KiB limit, checked before anything else): the
 * reference server's limits read the rest of a refused body (examples/course-school/src/edge/body-limit.ts).
 * Before, with Hono's `bodyLimit`, the API's and the login form's uploads got EPIPE or hung.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { MAX_FORM_BYTES } from '../../examples/course-school/src/pages/app.js';
import { startTestServer } from '../helpers/course-school.js';
import { obtainTokens, siteOf } from '../helpers/school-flow.js';
import { uploadOutcomes } from '../helpers/upload-then-read.js';

const UPLOADS = 20;
const BODY = Buffer.alloc(8 * 1024 * 1024, 'x');

let school: CourseSchoolServer;
let port = 0;
let host = '';
let owner = '';

beforeAll(async () => {
  school = await startTestServer({ RATE_LIMIT: 'off' });
  port = Number(school.address.split(':').pop());
  host = new URL(school.issuer).host;
  ({
    tokens: { access_token: owner },
  } = await obtainTokens(siteOf(school), { scope: 'courses:write storage:write' }));
});
afterAll(() => school?.close());

const ROUTES = [
  { name: 'the library (POST /api/oauth/register)', path: '/api/oauth/register', headers: {} },
  {
    name: 'the business API (POST /api/v1/courses)',
    path: '/api/v1/courses',
    headers: (): Record<string, string> => ({ Authorization: `Bearer ${owner}` }),
  },
  {
    name: 'an upload (POST /api/v1/storage/objects, 1 MiB)',
    path: '/api/v1/storage/objects?name=big.bin',
    headers: (): Record<string, string> => ({
      Authorization: `Bearer ${owner}`,
      'Content-Type': 'application/octet-stream',
    }),
  },
  {
    name: 'the login form (POST /login)',
    path: '/login',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  },
] as const;

describe.each(ROUTES)('early refusal through the reference server: $name (ABU-07)', (route) => {
  it.each(['content-length', 'chunked'] as const)(
    `${UPLOADS} of ${UPLOADS} uploads of 8 MiB (%s) read their 413, keep-alive or not`,
    async (framing) => {
      const headers = typeof route.headers === 'function' ? route.headers() : route.headers;
      const outcomes = await uploadOutcomes(port, UPLOADS, {
        path: route.path,
        host,
        headers,
        body: BODY,
        framing,
      });
      expect(outcomes).toEqual({ '413': UPLOADS });
    },
  );
});

describe('body limits of the page forms', () => {
  it.each(['/login', '/logout', '/account/apps/revoke'])(
    'answers %s a 413 page for a form larger than 16 KiB, which fetch reads',
    async (path) => {
      expect(MAX_FORM_BYTES).toBe(16 * 1024);
      const response = await fetch(`${school.issuer}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: school.issuer },
        body: `email=${'a'.repeat(MAX_FORM_BYTES)}&password=x`,
      });
      expect(response.status).toBe(413);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await response.text()).toContain('too large');
    },
  );

  it('still takes a form within the limit (a wrong password is 401, not 413)', async () => {
    const page = await fetch(`${school.issuer}/login`);
    const cookie = page.headers.getSetCookie()[0]!.split(';', 1)[0]!;
    const csrf = /name="csrf_token" value="([^"]*)"/.exec(await page.text())![1]!;
    const response = await fetch(`${school.issuer}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: school.issuer, cookie },
      body: new URLSearchParams({ email: 'ada@example.com', password: 'p'.repeat(900), csrf_token: csrf }),
    });
    expect(response.status).toBe(401);
  });
});
