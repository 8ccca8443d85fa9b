/**
 * Writes and role rules of the business API, run through the real Hono app of the API (routing,
 * request validation, the role rule, the handlers) and data store, in process, with a guard that
 * resolves the caller from a fixed token. Token verification is the library guard's job and is
 * tested with real tokens in the end-to-end suite; here the question is what a given caller may do.
 */
import { OAuthError } from 'portcullis';
import { beforeEach, describe, expect, it } from 'vitest';
import { createApiApp } from '../../examples/course-school/src/api/app.js';
import type { ApiServices } from '../../examples/course-school/src/api/route.js';
import { API_ROUTES } from '../../examples/course-school/src/api/route-table.js';
import type { GuardResult, Principal } from '../../examples/course-school/src/auth/bearer-guard.js';
import { createMemoryDataStore } from '../../examples/course-school/src/data/memory-store.js';
import { seed } from '../../examples/course-school/src/seed.js';

const ISSUER = 'http://127.0.0.1:9';
let services: ApiServices;

const principal = (subject: string): Principal => ({
  anonymous: false,
  token: 'token',
  subject,
  clientId: 'client',
  scope: [],
  audience: [ISSUER],
  expiresAt: 0,
  issuedAt: 0,
  jti: 'jti',
});

/** The callers of these tests: the bearer token names the user (`Bearer usr_ada`). */
const owner = 'usr_ada';
const student = 'usr_grace';

/** A guard that accepts any token as the user it names, and no token as anonymous. */
function guardSaying(decide: (authorization: string | undefined) => GuardResult) {
  const seen: unknown[] = [];
  return {
    seen,
    guard: {
      resource: ISSUER,
      async check(request: { headers: Readonly<Record<string, unknown>> }, requirement: unknown) {
        seen.push(requirement);
        return decide(request.headers.authorization as string | undefined);
      },
    },
  };
}
const byToken = (authorization: string | undefined): GuardResult =>
  authorization === undefined
    ? { ok: true, principal: { anonymous: true } }
    : { ok: true, principal: principal(authorization.slice('Bearer '.length)) };

let app: ReturnType<typeof createApiApp>;

beforeEach(async () => {
  const data = createMemoryDataStore();
  await seed(data, Date.now(), { demo: true });
  services = { data, issuer: ISSUER, now: Date.now };
  app = createApiApp(API_ROUTES, { guard: guardSaying(byToken).guard, services });
});

/** Calls an operation as `caller`; `path` has its parameters filled in, under `/api/v1`. */
async function call(
  caller: string,
  method: string,
  path: string,
  options: {
    params?: Record<string, string>;
    query?: string;
    body?: unknown;
    raw?: Buffer;
    type?: string;
  } = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers; bytes: Buffer }> {
  const payload = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  let url = `/api/v1${path}`;
  for (const [name, value] of Object.entries(options.params ?? {}))
    url = url.replace(`{${name}}`, encodeURIComponent(value));
  const response = await app.request(`${url}${options.query === undefined ? '' : `?${options.query}`}`, {
    method,
    headers: {
      authorization: `Bearer ${caller}`,
      ...(payload === undefined ? {} : { 'content-type': options.type ?? 'application/json' }),
    },
    ...(payload === undefined
      ? {}
      : { body: typeof payload === 'string' ? payload : new Uint8Array(payload) }),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const text = bytes.toString();
  return {
    status: response.status,
    body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : { text },
    headers: response.headers,
    bytes,
  };
}

const paths = (body: Record<string, unknown>) =>
  (body.issues as { path: string }[]).map((i) => i.path).sort();

describe('create, update, delete', () => {
  it('creates a course (201, Location) that then lists and reads', async () => {
    const created = await call(owner, 'POST', '/courses', {
      body: {
        title: 'Type Systems',
        slug: 'type-systems',
        price_cents: 2900,
        currency: 'EUR',
        status: 'published',
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(id).toMatch(/^crs_/);
    expect(created.headers.get('location')).toBe(`${ISSUER}/api/v1/courses/${id}`);
    expect(created.body.level).toBe('beginner');
    const read = await call(student, 'GET', '/courses/{courseId}', { params: { courseId: id } });
    expect(read.body.title).toBe('Type Systems');
  });

  it('refuses an invalid body with every problem located', async () => {
    const bad = await call(owner, 'POST', '/courses', {
      body: { slug: 'Not A Slug', price_cents: -1, currency: 'usd', extra: true },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_request');
    expect(paths(bad.body)).toEqual([
      'body.currency',
      'body.extra',
      'body.price_cents',
      'body.slug',
      'body.title',
    ]);
  });

  it('refuses a missing body, a non-JSON body, bad JSON, and an oversized body', async () => {
    expect((await call(owner, 'POST', '/courses')).status).toBe(400);
    expect(
      (
        await call(owner, 'POST', '/courses', {
          raw: Buffer.from('title=x'),
          type: 'application/x-www-form-urlencoded',
        })
      ).status,
    ).toBe(415);
    expect((await call(owner, 'POST', '/courses', { raw: Buffer.from('{"title":') })).status).toBe(400);
    const huge = Buffer.from(JSON.stringify({ title: 'x'.repeat(70 * 1024) }));
    expect((await call(owner, 'POST', '/courses', { raw: huge })).status).toBe(413);
  });

  it('updates only the fields sent, and keeps the record valid', async () => {
    const params = { courseId: 'crs_compilers' };
    const updated = await call(owner, 'PATCH', '/courses/{courseId}', {
      params,
      body: { price_cents: 7900 },
    });
    expect(updated.status).toBe(200);
    // Fields not sent keep their values, even those with a default (status would default to draft).
    expect(updated.body).toMatchObject({
      price_cents: 7900,
      title: 'Compilers from Scratch',
      status: 'published',
    });
    expect((await call(owner, 'PATCH', '/courses/{courseId}', { params, body: {} })).status).toBe(400);
    const invalid = await call(owner, 'PATCH', '/courses/{courseId}', {
      params,
      body: { status: 'archived' },
    });
    expect(paths(invalid.body)).toEqual(['body.status']);
  });

  it('unpublishing a course removes it from what a student sees', async () => {
    const params = { courseId: 'crs_debugging' };
    await call(owner, 'PATCH', '/courses/{courseId}', { params, body: { status: 'draft' } });
    expect((await call(student, 'GET', '/courses/{courseId}', { params })).status).toBe(404);
    const list = await call(student, 'GET', '/courses', { query: 'limit=100' });
    expect((list.body.data as { id: string }[]).map((c) => c.id)).not.toContain('crs_debugging');
  });

  it('deletes a course with its sections and lessons', async () => {
    const params = { courseId: 'crs_debugging' };
    expect((await call(owner, 'DELETE', '/courses/{courseId}', { params })).status).toBe(204);
    expect((await call(owner, 'GET', '/courses/{courseId}', { params })).status).toBe(404);
    expect(await services.data.countRecords('lesson', { parentId: 'crs_debugging' })).toBe(0);
  });

  it('checks references: lecturers of a course, the section of a lesson, the plan of a subscription', async () => {
    const course = await call(owner, 'POST', '/courses', {
      body: { title: 'X', slug: 'x', price_cents: 0, currency: 'USD', lecturer_ids: ['lec_nobody'] },
    });
    expect(paths(course.body)).toEqual(['body.lecturer_ids']);
    const lesson = await call(owner, 'POST', '/courses/{courseId}/lessons', {
      params: { courseId: 'crs_compilers' },
      body: { title: 'Misplaced', section_id: 'sec_debugging_1' },
    });
    expect(paths(lesson.body)).toEqual(['body.section_id']);
    const sub = await call(student, 'POST', '/subscriptions', { body: { plan_id: 'pln_team' } });
    expect(sub.status).toBe(400);
  });

  it('refuses to delete a section that still has lessons (409)', async () => {
    const params = { courseId: 'crs_compilers', sectionId: 'sec_compilers_1' };
    expect((await call(owner, 'DELETE', '/courses/{courseId}/sections/{sectionId}', { params })).status).toBe(
      409,
    );
  });

  it('refuses an event that ends before it starts', async () => {
    const event = await call(owner, 'POST', '/events', {
      body: { title: 'Backwards', starts_at: '2030-01-02T00:00:00Z', ends_at: '2030-01-01T00:00:00Z' },
    });
    expect(paths(event.body)).toEqual(['body.ends_at']);
  });

  it('stores an upload and gives it back byte for byte', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const up = await call(owner, 'POST', '/storage/objects', {
      query: 'name=blob.bin',
      raw: bytes,
      type: 'application/octet-stream',
    });
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({
      name: 'blob.bin',
      size_bytes: 5,
      content_type: 'application/octet-stream',
    });
    expect(up.body).not.toHaveProperty('content_base64');
    const download = await call(owner, 'GET', '/storage/objects/{objectId}/content', {
      params: { objectId: up.body.id as string },
    });
    expect(download.bytes).toEqual(bytes);
    expect(download.headers.get('content-disposition')).toContain('attachment');
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
    expect((await call(owner, 'POST', '/storage/objects', { query: 'name=../etc', raw: bytes })).status).toBe(
      400,
    );
  });
});

describe('what each user sees', () => {
  it('shows a student their own orders only, and the owner all of them', async () => {
    const mine = await call(student, 'GET', '/orders');
    expect((mine.body.data as { id: string }[]).map((o) => o.id)).toEqual(['ord_grace_1']);
    expect(
      (await call(student, 'GET', '/orders/{orderId}', { params: { orderId: 'ord_alan_1' } })).status,
    ).toBe(404);
    const all = await call(owner, 'GET', '/orders');
    expect((all.body.data as { id: string }[]).map((o) => o.id)).toEqual(['ord_grace_1', 'ord_alan_1']);
  });

  it('lets a student subscribe and cancel their own subscription, not another', async () => {
    const sub = await call(student, 'POST', '/subscriptions', { body: { plan_id: 'pln_yearly' } });
    expect(sub.status).toBe(201);
    expect(sub.body.user_id).toBe('usr_grace');
    const params = { subscriptionId: sub.body.id as string };
    expect(
      (
        await call(student, 'PATCH', '/subscriptions/{subscriptionId}', {
          params,
          body: { status: 'canceled' },
        })
      ).body.status,
    ).toBe('canceled');
    const other = await call(owner, 'POST', '/subscriptions', { body: { plan_id: 'pln_team' } });
    expect(
      (
        await call(student, 'DELETE', '/subscriptions/{subscriptionId}', {
          params: { subscriptionId: other.body.id as string },
        })
      ).status,
    ).toBe(404);
  });

  it('shows drafts to the owner and hides them from students', async () => {
    const studentPosts = await call(student, 'GET', '/posts');
    expect((studentPosts.body.data as { id: string }[]).map((p) => p.id)).toEqual([
      'pst_welcome',
      'pst_engines',
    ]);
    const ownerPosts = await call(owner, 'GET', '/posts');
    expect((ownerPosts.body.data as { id: string }[]).map((p) => p.id)).toContain('pst_draft');
    const comments = await call(student, 'GET', '/comments', { query: 'post_id=pst_welcome' });
    expect((comments.body.data as { id: string }[]).map((c) => c.id)).toEqual(['cmt_1']);
  });

  it('renames the account of the caller', async () => {
    const renamed = await call(student, 'PATCH', '/account', { body: { name: 'Rear Admiral Hopper' } });
    expect(renamed.body).toMatchObject({ id: 'usr_grace', name: 'Rear Admiral Hopper', role: 'student' });
    expect((await services.data.getUser('usr_grace'))?.name).toBe('Rear Admiral Hopper');
  });

  it('keeps a new name as others will see it: bidi, zero-width and control characters removed, blanks folded', async () => {
    const renamed = await call(student, 'PATCH', '/account', {
      body: { name: '  Grace\u202e\u200b   Hopper\n ' },
    });
    expect(renamed.body).toMatchObject({ name: 'Grace Hopper' });
    expect((await services.data.getUser('usr_grace'))?.name).toBe('Grace Hopper');
    const invisible = await call(student, 'PATCH', '/account', { body: { name: '\u202e\u200b ' } });
    expect(invisible.status).toBe(400);
    expect((await services.data.getUser('usr_grace'))?.name).toBe('Grace Hopper');
  });

  it('computes analytics from the records', async () => {
    const summary = await call(owner, 'GET', '/analytics/summary');
    expect(summary.body).toEqual({
      students: 3,
      courses: 4,
      published_courses: 3,
      paid_orders: 2,
      revenue_cents: 4410 + 9900,
      currency: 'USD',
      active_subscriptions: 1,
    });
  });
});

describe('the role rule after the guard', () => {
  it('refuses a student on an owner-only operation with 403 forbidden', async () => {
    const refused = await call(student, 'GET', '/students');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
  });

  it('lets the owner through with the user resolved', async () => {
    const allowed = await call(owner, 'GET', '/account');
    expect(allowed.status).toBe(200);
    expect(allowed.body.email).toBe('ada@example.com');
    expect((await call(owner, 'GET', '/students')).status).toBe(200);
  });

  it('refuses a token whose user no longer exists', async () => {
    const gone = await call('usr_gone', 'GET', '/account');
    expect(gone.status).toBe(403);
  });

  it('passes the route scope to the guard, required unless the route is public', async () => {
    const { guard, seen } = guardSaying(byToken);
    const spied = createApiApp(API_ROUTES, { guard, services });
    await spied.request('/api/v1/courses');
    await spied.request('/api/v1/coupons', { method: 'POST' });
    expect(seen).toEqual([
      { scope: 'courses:read', required: false },
      { scope: 'coupons:write', required: true },
    ]);
  });

  it('answers the guard’s refusal as the guard made it, before reading the request', async () => {
    const refusal: GuardResult = {
      ok: false,
      error: new OAuthError('invalid_token', 'the token is not valid'),
      response: {
        status: 401,
        headers: { 'www-authenticate': 'Bearer resource_metadata="x"', 'content-type': 'application/json' },
        body: '{"error":"invalid_token"}',
      },
    };
    const refusing = createApiApp(API_ROUTES, { guard: guardSaying(() => refusal).guard, services });
    const response = await refusing.request('/api/v1/courses?limit=oops', { method: 'POST', body: '{' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer resource_metadata="x"');
  });
});
