/**
 * The business API over HTTP, without tokens: the anonymous catalog (spec §5.5 rule 1), the
 * challenge of operations that need a user (RS-02), pagination, and request validation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { startTestServer } from '../helpers/course-school.js';

let app: CourseSchoolServer;
let api: string;

beforeAll(async () => {
  app = await startTestServer();
  api = `${app.issuer}/api/v1`;
});
afterAll(() => app.close());

interface Page {
  data: { id: string; [field: string]: unknown }[];
  next_cursor: string | null;
}

async function getJson(url: string, init?: RequestInit) {
  const response = await fetch(url, init);
  return { response, body: (await response.json()) as Record<string, unknown> };
}

describe('anonymous catalog (spec §5.5 rule 1)', () => {
  it('serves published courses without a token and without a challenge', async () => {
    const { response, body } = await getJson(`${api}/courses`);
    expect(response.status).toBe(200);
    expect(response.headers.get('www-authenticate')).toBeNull();
    const ids = (body as unknown as Page).data.map((c) => c.id);
    expect(ids).toEqual(['crs_analytical_engines', 'crs_compilers', 'crs_debugging']);
    expect((body as unknown as Page).data.every((c) => c.status === 'published')).toBe(true);
  });

  it('hides draft courses, even by id, as if they did not exist', async () => {
    const { response, body } = await getJson(`${api}/courses/crs_bernoulli_advanced`);
    expect(response.status).toBe(404);
    expect(body.error).toBe('not_found');
    expect((await fetch(`${api}/courses/crs_bernoulli_advanced/outline`)).status).toBe(404);
  });

  it('reads one published course and its outline, titles only', async () => {
    const course = await getJson(`${api}/courses/crs_compilers`);
    expect(course.response.status).toBe(200);
    expect(course.body.title).toBe('Compilers from Scratch');
    const outline = await getJson(`${api}/courses/crs_compilers/outline`);
    expect(outline.body.lesson_count).toBe(4);
    const sections = outline.body.sections as { title: string; lessons: Record<string, unknown>[] }[];
    expect(sections.map((s) => s.title)).toEqual(['Front end', 'Back end']);
    expect(sections[0]!.lessons[0]).toEqual({
      id: 'les_compilers_1_1',
      title: 'Lexing',
      duration_minutes: 25,
      preview: true,
    });
    expect(JSON.stringify(outline.body)).not.toContain('Lesson notes');
  });

  it('searches the catalog with q, and finds no drafts', async () => {
    const found = (await getJson(`${api}/courses?q=COMPILER`)).body as unknown as Page;
    expect(found.data.map((c) => c.id)).toEqual(['crs_compilers']);
    const draft = (await getJson(`${api}/courses?q=bernoulli%20numbers`)).body as unknown as Page;
    expect(draft.data).toEqual([]);
  });

  it('lists public membership plans and public pages only', async () => {
    const plans = (await getJson(`${api}/membership-plans`)).body as unknown as Page;
    expect(plans.data.map((p) => p.id)).toEqual(['pln_free', 'pln_monthly', 'pln_yearly']);
    expect((await fetch(`${api}/membership-plans/pln_team`)).status).toBe(404);
    const pages = (await getJson(`${api}/pages`)).body as unknown as Page;
    expect(pages.data.map((p) => p.slug)).toEqual(['about', 'terms']);
    expect((await fetch(`${api}/pages/pag_handbook`)).status).toBe(404);
  });
});

describe('operations that need a user (RS-02)', () => {
  const needUser: [string, string, string][] = [
    ['GET', '/students', 'students:read'],
    ['GET', '/orders', 'orders:read'],
    ['GET', '/analytics/summary', 'analytics:read'],
    ['GET', '/courses/crs_compilers/lessons', 'curriculum:read'],
    ['GET', '/account', 'account:read'],
    ['GET', '/school', 'school:read'],
    ['POST', '/courses', 'courses:write'],
    ['DELETE', '/pages/pag_about', 'pages:write'],
    ['POST', '/storage/objects?name=a.txt', 'storage:write'],
  ];
  it.each(needUser)(
    '%s %s without a token: 401 pointing at the resource metadata, with the scope',
    async (method, path, scope) => {
      const response = await fetch(`${api}${path}`, { method });
      expect(response.status).toBe(401);
      const challenge = response.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer /);
      expect(challenge).toContain(`resource_metadata="${app.issuer}/.well-known/oauth-protected-resource"`);
      expect(challenge).toContain(`scope="${scope}"`);
      expect(challenge).not.toContain('error=');
    },
  );

  it('the metadata named in the challenge exists and names this API as its resource', async () => {
    const { body } = await getJson(`${app.issuer}/.well-known/oauth-protected-resource`);
    expect(body.resource).toBe(app.issuer);
    expect(body.authorization_servers).toEqual([app.issuer]);
  });

  it('never serves a request that carries a bearer token as anonymous (RS-03)', async () => {
    for (const path of ['/courses', '/students']) {
      const response = await fetch(`${api}${path}`, {
        headers: { authorization: 'Bearer not-a-real-token' },
      });
      // 401 invalid_token once the library guard verifies tokens; never a 200 of public data.
      expect([401, 503]).toContain(response.status);
      expect(JSON.stringify(await response.json())).not.toContain('crs_compilers');
    }
  });

  it('ignores access_token in the query: served as anonymous (RS-06)', async () => {
    const response = await fetch(`${api}/courses?access_token=abc`);
    // The query parameter is not a credential; as an unknown parameter it is refused, never honoured.
    expect(response.status).toBe(400);
    const students = await fetch(`${api}/students?access_token=abc`);
    expect(students.status).toBe(401);
  });
});

describe('pagination', () => {
  it('walks every published course one page at a time, without repeats', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = (await getJson(`${api}/courses?limit=1${cursor === null ? '' : `&cursor=${cursor}`}`))
        .body as unknown as Page;
      expect(page.data.length).toBeLessThanOrEqual(1);
      seen.push(...page.data.map((c) => c.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(seen).toEqual(['crs_analytical_engines', 'crs_compilers', 'crs_debugging']);
  });

  it.each([['0'], ['101'], ['abc'], ['2.5']])(
    'refuses limit=%s with a 400 naming query.limit',
    async (limit) => {
      const { response, body } = await getJson(`${api}/courses?limit=${limit}`);
      expect(response.status).toBe(400);
      expect(body.error).toBe('invalid_request');
      expect((body.issues as { path: string }[]).map((i) => i.path)).toContain('query.limit');
    },
  );

  it('refuses a malformed cursor, an unknown parameter and a repeated one', async () => {
    expect((await fetch(`${api}/courses?cursor=!!`)).status).toBe(400);
    const typo = await getJson(`${api}/courses?limt=5`);
    expect(typo.response.status).toBe(400);
    expect((typo.body.issues as { path: string }[])[0]!.path).toBe('query.limt');
    expect((await fetch(`${api}/courses?limit=1&limit=2`)).status).toBe(400);
  });
});

describe('routing and errors', () => {
  it('answers unknown paths with a JSON 404', async () => {
    const { response, body } = await getJson(`${api}/nothing-here`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(body).toEqual({ error: 'not_found', error_description: 'no such resource' });
  });

  it('answers a known path with the wrong method with 405 and Allow', async () => {
    const response = await fetch(`${api}/courses`, { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST, HEAD');
  });

  it('refuses an invalid id with a 400 naming the path parameter', async () => {
    const { response, body } = await getJson(`${api}/courses/not%20an%20id`);
    expect(response.status).toBe(400);
    expect((body.issues as { path: string }[])[0]!.path).toBe('path.courseId');
  });

  it('refuses a malformed percent-encoding in the path', async () => {
    expect((await fetch(`${api}/courses/%E0%A4%A`)).status).toBe(400);
  });
});
