/**
 * The policies of docs/scope-policy.md (docs/snippets/scope-policy.ts) behave as the guide says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { firstPartyPolicy, lenientPolicy, registeredScopesPolicy } from '../../docs/snippets/scope-policy.js';
import {
  consentFields,
  Harness,
  json,
  pkce,
  type RegisteredClient,
  redirectParams,
} from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const WEB: RegisteredClient = {
  client_id: 'notes-web',
  client_secret: 'a-secret-of-at-least-16-characters',
  redirect_uris: ['https://notes.example.com/callback'],
};

describe('docs/scope-policy.md', () => {
  it('first-party policy: a configured client is never asked; a registered public client always is', async () => {
    harness = await Harness.start({
      options: {
        scopePolicy: firstPartyPolicy,
        clients: [
          { clientId: WEB.client_id, clientSecret: WEB.client_secret!, redirectUris: WEB.redirect_uris },
        ],
      },
    });
    const h = harness;
    const scope = { scope: 'openid notes:read' };
    const direct = await h.authorize(h.authorizeUrl(WEB, pkce(), scope), h.login('ada'));
    expect(direct.status).toBe(303);
    expect(redirectParams(direct).get('code')).not.toBeNull();

    const cli = await h.register();
    await h.obtainCode(cli, { extra: scope });
    const again = await h.authorize(h.authorizeUrl(cli, pkce(), scope), h.login('ada'));
    expect(again.status).toBe(200); // the consent page, although ada allowed this client before
  });

  it('lenient policy: unknown scopes are dropped, and the token response says what was granted', async () => {
    harness = await Harness.start({ options: { scopePolicy: lenientPolicy } });
    const h = harness;
    const client = await h.register();
    const p = pkce();
    const cookie = h.login('ada');
    const page = await h.authorize(
      h.authorizeUrl(client, p, { scope: 'openid notes:read courses:delete' }),
      cookie,
    );
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('courses:delete');
    const code = redirectParams(await h.decide(consentFields(page), 'allow', cookie)).get('code')!;
    expect(json(await h.exchange(client, code, p)).scope).toBe('openid notes:read');
  });

  it('from scratch: the registered scope is the default, and the only scope a client may ask for', async () => {
    harness = await Harness.start({ options: { scopePolicy: registeredScopesPolicy() } });
    const h = harness;
    const client = await h.register({ scope: 'openid notes:read' });
    const p = pkce();
    const cookie = h.login('ada');
    const page = await h.authorize(h.authorizeUrl(client, p, { scope: undefined }), cookie);
    expect(page.status).toBe(200);
    const code = redirectParams(await h.decide(consentFields(page), 'allow', cookie)).get('code')!;
    expect(json(await h.exchange(client, code, p)).scope).toBe('openid notes:read');

    const refused = await h.authorize(h.authorizeUrl(client, pkce(), { scope: 'notes:write' }), cookie);
    expect(redirectParams(refused).get('error')).toBe('invalid_scope');
  });
});
