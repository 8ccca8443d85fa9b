/**
 * The consent page tells the user which requested scopes their account cannot grant (the scope
 * policy's `grantable` left them out), instead of letting them disappear silently; a host's own
 * page gets the same list in `ConsentPageContext.notGrantable` (RFC 6749 §3.3, §10.2).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ConsentPageContext } from '../../src/callbacks.js';
import { createScopePolicy } from '../../src/scopes/policy.js';
import { courseSchoolScopes } from '../fixtures/course-school-scopes.js';
import { consentFields, Harness, json, pkce, redirectParams } from '../helpers/harness.js';

/** grace may not grant write scopes; ada may grant everything. */
const policy = createScopePolicy({
  registry: courseSchoolScopes,
  grantable: (userId, _client, scope) =>
    userId === 'grace' ? scope.filter((s) => !s.endsWith(':write')) : scope,
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The `<li>` texts of the list that follows `marker` on the page. */
function listAfter(body: string, marker: string): string[] {
  const start = body.indexOf(marker);
  if (start === -1) return [];
  const list = body.slice(start).match(/<ul[^>]*>([\s\S]*?)<\/ul>/)?.[1] ?? '';
  return [...list.matchAll(/<code>([^<]+)<\/code>/g)].map((m) => m[1]!);
}

describe('scopes the user cannot grant (RFC 6749 §3.3)', () => {
  it('lists them on the consent page apart from what the user is asked to grant, and leaves them out of the token', async () => {
    h = await Harness.start({ options: { scopePolicy: policy } });
    const client = await h.register();
    const p = pkce();
    const page = await h.authorize(
      h.authorizeUrl(client, p, { scope: 'openid courses:read courses:write students:write' }),
      h.login('grace'),
    );
    expect(page.status).toBe(200);
    expect(listAfter(page.body, 'wants to:')).toEqual(['openid', 'courses:read']);
    expect(page.body).toContain('Your account cannot grant these');
    expect(listAfter(page.body, 'Your account cannot grant')).toEqual(['courses:write', 'students:write']);
    expect(page.body).toContain('Write access to courses');

    const done = await h.decide(consentFields(page), 'allow', h.login('grace'));
    const tokens = json(await h.exchange(client, redirectParams(done).get('code')!, p));
    // RFC 6749 §3.3: the granted scope differs from the request, so the response names it.
    expect(tokens.scope).toBe('openid courses:read');
  });

  it('says nothing about it when every requested scope can be granted', async () => {
    h = await Harness.start({ options: { scopePolicy: policy } });
    const client = await h.register();
    const page = await h.authorize(
      h.authorizeUrl(client, pkce(), { scope: 'openid courses:read courses:write' }),
      h.login('ada'),
    );
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('cannot grant');
    expect(listAfter(page.body, 'wants to:')).toEqual(['openid', 'courses:read', 'courses:write']);
  });

  it('gives a custom consent page the same list in ConsentPageContext.notGrantable', async () => {
    const seen: ConsentPageContext[] = [];
    h = await Harness.start({
      options: {
        scopePolicy: policy,
        consent: {
          render: (context) => {
            seen.push(context);
            return '<p>custom</p>';
          },
        },
      },
    });
    const client = await h.register();
    await h.authorize(
      h.authorizeUrl(client, pkce(), { scope: 'courses:read pages:write' }),
      h.login('grace'),
    );
    expect(seen).toHaveLength(1);
    expect(seen[0]!.scopes.map((s) => s.name)).toEqual(['courses:read']);
    expect(seen[0]!.notGrantable).toEqual([{ name: 'pages:write', description: 'Write access to pages' }]);
  });
});
