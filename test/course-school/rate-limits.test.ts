/**
 * The reference server applies the library's default rate limits (ATK-36: registration per IP),
 * unless `RATE_LIMIT=off` (load tests from one address). 429 comes with `Retry-After` and the OAuth
 * JSON shape; a limited registration stores nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { configFromEnv } from '../../examples/course-school/src/config.js';
import { startTestServer } from '../helpers/course-school.js';

let app: CourseSchoolServer | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const register = (issuer: string, n: number) =>
  fetch(`${issuer}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: `cli ${n}`,
      redirect_uris: [`http://127.0.0.1:${9000 + n}/callback`],
    }),
  });

describe('rate limits of the reference server', () => {
  it('ATK-36 answers the 21st registration from one IP within the hour with 429, Retry-After and an OAuth error', async () => {
    app = await startTestServer();
    const statuses: number[] = [];
    for (let n = 0; n < 20; n++) statuses.push((await register(app.issuer, n)).status);
    expect(statuses.every((s) => s === 201)).toBe(true);

    const limited = await register(app.issuer, 20);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 3600).toBe(true);
    const body = (await limited.json()) as Record<string, unknown>;
    expect(body.error).toBe('too_many_requests');
    expect(body).not.toHaveProperty('client_id');
  });

  it('RATE_LIMIT=off lets a load test register past the default limit', async () => {
    app = await startTestServer({ RATE_LIMIT: 'off' });
    for (let n = 0; n < 25; n++) expect((await register(app.issuer, n)).status).toBe(201);
  });

  it('refuses a RATE_LIMIT other than on or off, naming the variable', () => {
    expect(() => configFromEnv({ RATE_LIMIT: 'false' })).toThrow(/RATE_LIMIT/);
    expect(configFromEnv({}).rateLimit).toBe(true);
    expect(configFromEnv({ RATE_LIMIT: 'off' }).rateLimit).toBe(false);
  });
});
