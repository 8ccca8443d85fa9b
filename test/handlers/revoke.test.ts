import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  expectInvalidToken,
  harnessWithIntrospection,
  introspection,
  issue,
  REVOKE,
  revoke,
  userinfo,
} from '../helpers/endpoints.js';
import { CB, type Harness, json, type RegisteredClient } from '../helpers/harness.js';
import type { TestResponse } from '../helpers/transports.js';

function expectError(response: TestResponse, status: number, error: string): void {
  expect(response.status).toBe(status);
  expect(json(response).error).toBe(error);
}

/** The access token is still accepted everywhere. */
async function expectAccessAlive(h: Harness, token: string): Promise<void> {
  expect((await userinfo(h, token)).status).toBe(200);
  expect((await introspection(h, token)).active).toBe(true);
}

/** The access token is refused everywhere. */
async function expectAccessDead(h: Harness, token: string): Promise<void> {
  expectInvalidToken(await userinfo(h, token));
  expect(await introspection(h, token)).toEqual({ active: false });
}

describe('Token revocation (RFC 7009)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harnessWithIntrospection();
  });
  afterEach(async () => {
    await h.close();
  });

  describe('REV-01: revoking a refresh token ends the grant (RFC 7009 §2.1)', () => {
    it('the refresh token then answers invalid_grant, and the access token is dead too', async () => {
      const t = await issue(h);
      const response = await revoke(h, t.client, t.refresh);
      expect(response.status).toBe(200);
      expect(response.body).toBe('');
      expect(response.headers['cache-control']).toBe('no-store');
      expectError(await h.refresh(t.client, t.refresh), 400, 'invalid_grant');
      await expectAccessDead(h, t.access);
    });

    it('kills every access token of the grant, including ones issued by earlier refreshes', async () => {
      const t = await issue(h);
      const refreshed = json(await h.refresh(t.client, t.refresh));
      const access2 = refreshed.access_token as string;
      const refresh2 = refreshed.refresh_token as string;
      await expectAccessAlive(h, access2);
      expect((await revoke(h, t.client, refresh2)).status).toBe(200);
      await expectAccessDead(h, t.access);
      await expectAccessDead(h, access2);
      expectError(await h.refresh(t.client, refresh2), 400, 'invalid_grant');
    });

    it('leaves the same user’s other grants alone', async () => {
      const a = await issue(h);
      const b = await issue(h);
      expect((await revoke(h, a.client, a.refresh)).status).toBe(200);
      await expectAccessAlive(h, b.access);
      expect((await h.refresh(b.client, b.refresh)).status).toBe(200);
    });
  });

  it('REV-02: revoking an access token answers 200, then userinfo 401 and introspection inactive', async () => {
    const t = await issue(h);
    const response = await revoke(h, t.client, t.access);
    expect(response.status).toBe(200);
    await expectAccessDead(h, t.access);
    // Only that access token: the grant and its refresh token live on (RFC 7009 §2.1 leaves it open).
    const refreshed = await h.refresh(t.client, t.refresh);
    expect(refreshed.status).toBe(200);
    await expectAccessAlive(h, json(refreshed).access_token as string);
  });

  describe('REV-03: unknown, already revoked and garbage tokens answer 200 (RFC 7009 §2.2)', () => {
    it.each([
      ['unknown', 'A'.repeat(43)],
      ['garbage', '%%% not a token ...'],
      ['oversized', 'x'.repeat(10_000)],
    ])('%s', async (_name, token) => {
      const client = await h.register();
      const response = await revoke(h, client, token);
      expect(response.status).toBe(200);
      expect(response.body).toBe('');
    });

    it('already revoked (access and refresh token)', async () => {
      const t = await issue(h);
      expect((await revoke(h, t.client, t.access)).status).toBe(200);
      expect((await revoke(h, t.client, t.access)).status).toBe(200);
      expect((await revoke(h, t.client, t.refresh)).status).toBe(200);
      expect((await revoke(h, t.client, t.refresh)).status).toBe(200);
    });
  });

  describe('REV-04: token_type_hint only orders the lookup (RFC 7009 §2.1)', () => {
    it('an access token sent with hint refresh_token is revoked', async () => {
      const t = await issue(h);
      expect((await revoke(h, t.client, t.access, { token_type_hint: 'refresh_token' })).status).toBe(200);
      await expectAccessDead(h, t.access);
    });

    it('a refresh token sent with hint access_token is revoked with its grant', async () => {
      const t = await issue(h);
      expect((await revoke(h, t.client, t.refresh, { token_type_hint: 'access_token' })).status).toBe(200);
      expectError(await h.refresh(t.client, t.refresh), 400, 'invalid_grant');
      await expectAccessDead(h, t.access);
    });

    it('an unknown hint value is ignored, not answered with unsupported_token_type', async () => {
      const t = await issue(h);
      const response = await revoke(h, t.client, t.access, { token_type_hint: 'id_token' });
      expect(response.status).toBe(200);
      await expectAccessDead(h, t.access);
      expect((await revoke(h, t.client, t.refresh, { token_type_hint: 'no_such_type' })).status).toBe(200);
      expectError(await h.refresh(t.client, t.refresh), 400, 'invalid_grant');
    });
  });

  describe('REV-05 / ATK-35: another client’s token is never revoked (RFC 7009 §2.1)', () => {
    it('an access token: 400 unauthorized_client and the token still works', async () => {
      const victim = await issue(h);
      const attacker = await h.register({ client_name: 'Other' });
      expectError(await revoke(h, attacker, victim.access), 400, 'unauthorized_client');
      await expectAccessAlive(h, victim.access);
    });

    it('a refresh token: 400 unauthorized_client and the grant still works', async () => {
      const victim = await issue(h);
      const attacker = await h.register({ client_name: 'Other' });
      expectError(await revoke(h, attacker, victim.refresh), 400, 'unauthorized_client');
      await expectAccessAlive(h, victim.access);
      expect((await h.refresh(victim.client, victim.refresh)).status).toBe(200);
    });

    it('an authenticated confidential client cannot revoke a public client’s token either', async () => {
      const victim = await issue(h);
      const attacker = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
      expectError(await revoke(h, attacker, victim.access), 400, 'unauthorized_client');
      await expectAccessAlive(h, victim.access);
    });
  });

  describe('REV-06: client authentication and required parameters (RFC 7009 §2.1, §2.2.1)', () => {
    it('a confidential client revokes with its secret', async () => {
      const t = await issue(h, { token_endpoint_auth_method: 'client_secret_post' });
      expect(t.client.client_secret).toBeTypeOf('string');
      expect((await revoke(h, t.client, t.refresh)).status).toBe(200);
      await expectAccessDead(h, t.access);
    });

    it.each([
      ['without its secret', undefined],
      ['with a wrong secret', 'wrong-secret'],
    ])('a confidential client %s gets invalid_client and nothing is revoked', async (_name, secret) => {
      const t = await issue(h, { token_endpoint_auth_method: 'client_secret_post' });
      const response = await revoke(h, { ...t.client, client_secret: secret } as RegisteredClient, t.access);
      expect([400, 401]).toContain(response.status);
      expect(json(response).error).toBe('invalid_client');
      await expectAccessAlive(h, t.access);
    });

    it('an unknown client gets invalid_client', async () => {
      const t = await issue(h);
      const response = await revoke(h, { client_id: 'nobody', redirect_uris: [] }, t.access);
      expect([400, 401]).toContain(response.status);
      expect(json(response).error).toBe('invalid_client');
      await expectAccessAlive(h, t.access);
    });

    it('no client_id at all is refused and nothing is revoked', async () => {
      const t = await issue(h);
      const response = await h.send({
        method: 'POST',
        url: REVOKE,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${encodeURIComponent(t.access)}`,
      });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      await expectAccessAlive(h, t.access);
    });

    it('a missing token answers 400 invalid_request', async () => {
      const client = await h.register();
      expectError(await revoke(h, client, undefined), 400, 'invalid_request');
    });

    it('PKJ-05 client_secret_basic (on by default) authenticates too; a wrong Basic secret is 401 with a challenge', async () => {
      await h.close();
      h = await harnessWithIntrospection();
      const client = await h.register({ token_endpoint_auth_method: 'client_secret_basic' });
      const basic = (secret: string) =>
        `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
      const { code, pkce } = await h.obtainCode(client);
      const exchanged = await h.token(
        { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: pkce.verifier },
        { authorization: basic(client.client_secret!) },
      );
      expect(exchanged.status).toBe(200);
      const t = { client, access: json(exchanged).access_token as string };
      const send = (secret: string) =>
        h.send({
          method: 'POST',
          url: REVOKE,
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(secret) },
          body: `token=${encodeURIComponent(t.access)}`,
        });
      const wrong = await send('wrong');
      expectError(wrong, 401, 'invalid_client');
      expect(wrong.headers['www-authenticate']).toMatch(/^Basic /);
      await expectAccessAlive(h, t.access);
      expect((await send(t.client.client_secret!)).status).toBe(200);
      await expectAccessDead(h, t.access);
    });
  });

  describe('REV-07: method and token types (RFC 7009 §2.1, §2.2.1)', () => {
    it('GET answers 405 with Allow: POST', async () => {
      const response = await h.send({ method: 'GET', url: REVOKE });
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('POST');
    });

    it('never answers unsupported_token_type for the token types it issues', async () => {
      const t = await issue(h);
      for (const hint of ['access_token', 'refresh_token', 'id_token', 'urn:x']) {
        for (const token of [t.access, t.refresh]) {
          const response = await revoke(h, t.client, token, { token_type_hint: hint });
          expect(response.status, hint).toBe(200);
        }
      }
    });

    it('repeated parameters answer 400 invalid_request and revoke nothing', async () => {
      const t = await issue(h);
      const response = await h.send({
        method: 'POST',
        url: REVOKE,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${encodeURIComponent(t.access)}&token=x&client_id=${t.client.client_id}`,
      });
      expectError(response, 400, 'invalid_request');
      await expectAccessAlive(h, t.access);
    });
  });
});
