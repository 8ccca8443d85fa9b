/**
 * The `authorization_code` grant's retry window (`tokens.codeGraceSeconds`; FLT-02, TOK-13): a
 * client that never got its token response (here the 200 is lost in transit; a storage failure
 * after the commit is in failure-injection.test.ts) presents the same exchange again and gets the
 * same response. Only the same exchange: the same client, `redirect_uri`, `code_verifier`,
 * `resource`s and DPoP key, between `Retry-After` (2 s) and `codeGraceSeconds` after the
 * redemption, on a grant still active. Anything else that reaches the consumed code is a replay,
 * which revokes what the code issued.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { STORAGE_RETRY_AFTER_SECONDS } from '../../src/storage/unavailable.js';
import { dpopClient } from '../helpers/dpop.js';
import {
  consentFields,
  Harness,
  type HarnessOptions,
  ISSUER,
  json,
  pkce,
  type RegisteredClient,
  redirectParams,
} from '../helpers/harness.js';

const TOKEN_URL = `${ISSUER}/api/oauth/token`;

let h: Harness;
afterEach(() => h.close());

async function start(options: HarnessOptions['options'] = {}) {
  h = await Harness.start({ options });
  return h;
}

/** A code exchanged once, its 200 lost on the way back: what the client retries with. */
async function lostExchange(client: RegisteredClient, extra: Record<string, string | undefined> = {}) {
  const { code, pkce } = await h.obtainCode(client);
  const lost = await h.exchange(client, code, pkce, extra);
  expect(lost.status, lost.body).toBe(200);
  return { code, pkce, lost: json(lost) };
}

const revocations = () => h.events.filter((e) => e.type === 'grant.revoked');

async function userinfoStatus(accessToken: unknown) {
  const response = await h.send({
    method: 'GET',
    url: '/api/oauth/userinfo',
    headers: { authorization: `Bearer ${String(accessToken)}` },
  });
  return response.status;
}

describe('FLT-02 a code exchange retried after its response was lost (tokens.codeGraceSeconds)', () => {
  it('gets the same response, expires_in counting down, and the grant lives on', async () => {
    await start();
    const client = await h.register();
    const { code, pkce, lost } = await lostExchange(client);
    h.clock.advance(5);
    const retry = await h.exchange(client, code, pkce);
    expect(retry.status, retry.body).toBe(200);
    const body = json(retry);
    expect(body).toEqual({ ...lost, expires_in: Number(lost.expires_in) - 5 });
    expect(await userinfoStatus(body.access_token)).toBe(200);
    expect((await h.refresh(client, String(body.refresh_token))).status).toBe(200);
    expect(revocations()).toEqual([]);
  });

  it('TOK-13 the window runs from Retry-After to codeGraceSeconds: a retry at 1 s or at 10 s is a replay', async () => {
    await start();
    const client = await h.register();
    for (const elapsed of [STORAGE_RETRY_AFTER_SECONDS - 1, 10]) {
      const { code, pkce, lost } = await lostExchange(client);
      h.clock.advance(elapsed);
      expect(json(await h.exchange(client, code, pkce)).error).toBe('invalid_grant');
      expect(await userinfoStatus(lost.access_token)).toBe(401);
    }
    expect(revocations()).toHaveLength(2);
  });

  it('codeGraceSeconds: 20 widens it; 19 s after the redemption is still a retry', async () => {
    await start({ tokens: { codeGraceSeconds: 20 } });
    const client = await h.register();
    const { code, pkce, lost } = await lostExchange(client);
    h.clock.advance(19);
    expect(json(await h.exchange(client, code, pkce)).access_token).toBe(lost.access_token);
  });

  it('TOK-13 a retry for another resource than the redemption got is not the same exchange: a replay', async () => {
    await start();
    const client = await h.register();
    // A grant for both resources, whose redemption narrowed the token to one (RFC 8707 §2.2).
    const p = pkce();
    const cookie = h.login('ada');
    const both = `&resource=${encodeURIComponent(ISSUER)}&resource=${encodeURIComponent(`${ISSUER}/mcp`)}`;
    const page = await h.authorize(`${h.authorizeUrl(client, p)}${both}`, cookie);
    const code = redirectParams(await h.decide(consentFields(page), 'allow', cookie)).get('code')!;
    const first = await h.exchange(client, code, p, { resource: `${ISSUER}/mcp` });
    expect(first.status, first.body).toBe(200);
    const lost = json(first);
    h.clock.advance(STORAGE_RETRY_AFTER_SECONDS);
    expect((await h.exchange(client, code, p, { resource: `${ISSUER}/mcp` })).status).toBe(200);
    expect(json(await h.exchange(client, code, p, { resource: ISSUER })).error).toBe('invalid_grant');
    expect(await userinfoStatus(lost.access_token)).toBe(401);
    expect(revocations()).toHaveLength(1);
  });

  it('DPOP-01 a retry with the same DPoP key gets the same bound response; with another key, or none, it is a replay', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const client = await h.register();
    const bound = async (proof: string | undefined) => {
      const { code, pkce } = await h.obtainCode(client);
      const params = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: client.redirect_uris[0],
        client_id: client.client_id,
        code_verifier: pkce.verifier,
      };
      const first = await h.token(params, { dpop: await dpop.proof('POST', TOKEN_URL) });
      expect(json(first).token_type).toBe('DPoP');
      h.clock.advance(STORAGE_RETRY_AFTER_SECONDS);
      return { first: json(first), retry: await h.token(params, proof === undefined ? {} : { dpop: proof }) };
    };

    const same = await bound(await dpop.proof('POST', TOKEN_URL, { iat: h.clock.now() + 2 }));
    expect(json(same.retry).access_token).toBe(same.first.access_token);
    expect(json(same.retry).token_type).toBe('DPoP');
    expect(revocations()).toEqual([]);

    const other = await dpopClient(() => h.clock.now());
    const otherKey = await bound(await other.proof('POST', TOKEN_URL, { iat: h.clock.now() + 2 }));
    expect(json(otherKey.retry).error).toBe('invalid_grant');
    const none = await bound(undefined);
    expect(json(none.retry).error).toBe('invalid_grant');
    expect(revocations()).toHaveLength(2);
  });

  it('a retry by a client that authenticates presents the same credentials: a wrong secret is invalid_client, and revokes nothing', async () => {
    await start();
    const client = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
    const { code, pkce } = await lostExchange(client);
    h.clock.advance(STORAGE_RETRY_AFTER_SECONDS);
    const wrong = await h.exchange(client, code, pkce, { client_secret: 'not-the-secret' });
    expect(json(wrong).error).toBe('invalid_client');
    expect((await h.exchange(client, code, pkce)).status).toBe(200);
    expect(revocations()).toEqual([]);
  });

  it('refuses a window that cannot open (1 or 2 s: retries sooner than Retry-After are replays) or that reaches 30 s', async () => {
    for (const codeGraceSeconds of [1, 2, 21]) {
      await expect(Harness.start({ options: { tokens: { codeGraceSeconds } } })).rejects.toThrow(
        /tokens\.codeGraceSeconds/,
      );
    }
    await start({ tokens: { codeGraceSeconds: 0 } });
  });
});
