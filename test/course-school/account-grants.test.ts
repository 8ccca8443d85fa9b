/**
 * The account page after a real flow: it lists the app the user authorized; its Revoke button
 * (a CSRF-protected POST) ends the grant, so the access token is refused by the API on the very
 * next request and the refresh token is dead; the app then disappears from the list. A user cannot
 * revoke another user's app.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { startTestServer } from '../helpers/course-school.js';
import {
  ADA,
  api,
  at,
  bearerChallenge,
  decodeHtml,
  GRACE,
  hiddenFields,
  obtainTokens,
  refreshRequest,
  type Site,
  signIn,
  siteOf,
} from '../helpers/school-flow.js';

let app: CourseSchoolServer;
let site: Site;

beforeAll(async () => {
  app = await startTestServer();
  site = siteOf(app);
});
afterAll(() => app.close());

/** One row of the "Authorized apps" table: the app's name and client id, and its revoke form. */
interface AppRow {
  readonly name: string;
  readonly clientId: string;
  readonly fields: Record<string, string>;
}

async function accountPage(
  cookie: string,
  url = `${site.base}/account`,
): Promise<{ html: string; apps: AppRow[] }> {
  const response = await fetch(url, { headers: { cookie }, redirect: 'manual' });
  expect(response.status).toBe(200);
  const html = await response.text();
  const apps: AppRow[] = [];
  for (const row of html.matchAll(
    /<tr><td><strong>([^<]*)<\/strong><br><span class="muted">([^<]*)<\/span>[\s\S]*?<\/tr>/g,
  )) {
    apps.push({ name: decodeHtml(row[1]!), clientId: decodeHtml(row[2]!), fields: hiddenFields(row[0]) });
  }
  return { html, apps };
}

function revoke(cookie: string, fields: Record<string, string>): Promise<Response> {
  return fetch(`${site.base}/account/apps/revoke`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie,
      origin: new URL(app.issuer).origin,
    },
    body: new URLSearchParams(fields),
  });
}

describe('authorized apps on the account page', () => {
  it('lists the app after a flow; Revoke ends the grant at once and removes the app', async () => {
    const cookie = await signIn(site, ADA);
    const before = await accountPage(cookie);
    const { clientId, tokens } = await obtainTokens(site, {
      scope: 'openid account:read courses:read',
      user: { cookie },
      clientName: 'Homework Helper',
    });
    const kept = await obtainTokens(site, {
      scope: 'account:read',
      user: { cookie },
      clientName: 'Other App',
    });
    expect((await api(site, '/account', tokens.access_token)).status).toBe(200);

    const listed = await accountPage(cookie);
    expect(listed.apps).toHaveLength(before.apps.length + 2);
    const row = listed.apps.find((a) => a.clientId === clientId);
    expect(row).toMatchObject({ name: 'Homework Helper' });
    expect(listed.html).toContain('<code>account:read</code>');
    expect(Object.keys(row!.fields).sort()).toEqual(['csrf_token', 'grant_id']);

    const revoked = await revoke(cookie, row!.fields);
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('location')).toBe(`${app.issuer}/account?revoked=1`);

    // The very next request with the access token is refused.
    const refused = await api(site, '/account', tokens.access_token);
    expect(refused.status).toBe(401);
    expect(bearerChallenge(refused).error).toBe('invalid_token');
    // The refresh token is dead.
    const refresh = await refreshRequest(site, clientId, tokens.refresh_token);
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });

    // Where the browser lands: the app is gone from the list; the other app stays, and still works.
    const after = await accountPage(cookie, at(site, revoked.headers.get('location')!));
    expect(after.apps.map((a) => a.clientId)).not.toContain(clientId);
    expect(after.apps.map((a) => a.clientId)).toContain(kept.clientId);
    expect(after.html).toContain('Access revoked.');
    expect((await api(site, '/account', kept.tokens.access_token)).status).toBe(200);
  });

  it('refuses a revoke without the session’s CSRF token, and the app keeps working', async () => {
    const cookie = await signIn(site, ADA);
    const { clientId, tokens } = await obtainTokens(site, { scope: 'account:read', user: { cookie } });
    const row = (await accountPage(cookie)).apps.find((a) => a.clientId === clientId)!;
    expect((await revoke(cookie, { ...row.fields, csrf_token: 'forged' })).status).toBe(403);
    expect((await revoke(cookie, { grant_id: row.fields.grant_id! })).status).toBe(403);
    expect((await api(site, '/account', tokens.access_token)).status).toBe(200);
    expect((await accountPage(cookie)).apps.map((a) => a.clientId)).toContain(clientId);
  });

  it('does not let one user revoke another user’s app', async () => {
    const adaCookie = await signIn(site, ADA);
    const { clientId, tokens } = await obtainTokens(site, {
      scope: 'account:read',
      user: { cookie: adaCookie },
    });
    const adaRow = (await accountPage(adaCookie)).apps.find((a) => a.clientId === clientId)!;

    // grace posts ada's grant id with grace's own valid CSRF token.
    const graceCookie = await signIn(site, GRACE);
    const graceCsrf = hiddenFields((await accountPage(graceCookie)).html).csrf_token!;
    const attempt = await revoke(graceCookie, { csrf_token: graceCsrf, grant_id: adaRow.fields.grant_id! });
    expect(attempt.status).toBe(404);

    expect((await api(site, '/account', tokens.access_token)).status).toBe(200);
    expect((await accountPage(adaCookie)).apps.map((a) => a.clientId)).toContain(clientId);
    expect((await accountPage(graceCookie)).apps.map((a) => a.clientId)).not.toContain(clientId);
  });
});
