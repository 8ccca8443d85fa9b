/**
 * ABU-09: UserInfo accepts only access tokens meant for this server: the issuer in `aud`, or a
 * resource the host named in `userinfo.audiences`. A token issued only for another resource server
 * gets 401 invalid_token, so that server cannot replay it to read the user's claims (RFC 9700
 * §4.10; RFC 8707 §2). OIDC clients that ask for no `resource` get the default one, the issuer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/options.js';
import { createAuthorizationServer } from '../../src/server.js';
import { memoryStorage } from '../../src/storage/memory.js';
import { expectInvalidToken, userinfo } from '../helpers/endpoints.js';
import { Harness, ISSUER, json } from '../helpers/harness.js';

const MCP = `${ISSUER}/mcp`;

let h: Harness | undefined;
afterEach(() => h?.close());

describe('ABU-09 UserInfo requires the issuer (or a configured audience) in aud', () => {
  it('refuses a token issued only for another resource with 401 invalid_token', async () => {
    h = await Harness.start();
    const { body } = await h.tokens({}, { resource: MCP });
    const response = await userinfo(h, body.access_token as string);
    expectInvalidToken(response);
    expect(json(response).error_description).toBe(
      'the access token was issued for another resource, not for UserInfo',
    );
  });

  it('accepts a token requested without resource (its audience is the default resource, the issuer)', async () => {
    h = await Harness.start();
    const { body } = await h.tokens();
    const response = await userinfo(h, body.access_token as string);
    expect(response.status).toBe(200);
    expect(json(response).sub).toBe('ada');
  });

  it('accepts a token for a resource named in userinfo.audiences', async () => {
    h = await Harness.start({ options: { userinfo: { audiences: [MCP] } } });
    const { body } = await h.tokens({}, { resource: MCP });
    expect((await userinfo(h, body.access_token as string)).status).toBe(200);
  });

  it('refuses an audience that is not a configured resource at start-up, naming the option', async () => {
    const starting = createAuthorizationServer({
      issuer: ISSUER,
      storage: memoryStorage(),
      userinfo: { audiences: ['https://elsewhere.example/api'] },
    });
    await expect(starting).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(starting).rejects.toThrow(
      /options\.userinfo\.audiences\.0: https:\/\/elsewhere\.example\/api is not one of options\.resources/,
    );
  });
});
