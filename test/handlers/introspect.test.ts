import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RateLimitBucket, RateLimiter } from '../../src/core/rate-limit.js';
import {
  harnessWithIntrospection,
  INTROSPECT,
  introspect,
  introspection,
  RS_CALLER,
  revoke,
  userinfo,
} from '../helpers/endpoints.js';
import { type Harness, ISSUER, json, type RegisteredClient } from '../helpers/harness.js';
import type { TestResponse } from '../helpers/transports.js';

const MCP = `${ISSUER}/mcp`;
const INACTIVE = '{"active":false}';

function credentialsOf(client: RegisteredClient): Record<string, string | undefined> {
  return { client_id: client.client_id, client_secret: client.client_secret };
}

function expectInactive(response: TestResponse): void {
  expect(response.status).toBe(200);
  // RFC 7662 §2.2: an inactive answer says nothing else, not even why.
  expect(response.body).toBe(INACTIVE);
  expect(response.headers['cache-control']).toBe('no-store');
}

function expectUnauthorized(response: TestResponse): void {
  expect(response.status).toBe(401);
  expect(json(response).error).toBe('invalid_client');
  expect(response.headers['www-authenticate']).toMatch(/^Basic /);
  expect(response.body).not.toContain('active');
}

describe('Token introspection (RFC 7662)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harnessWithIntrospection();
  });
  afterEach(async () => {
    await h.close();
  });

  describe('INT-01 / ATK-36: callers must authenticate (RFC 7662 §2.1, §4)', () => {
    it('no credentials at all → 401', async () => {
      const { body } = await h.tokens();
      expectUnauthorized(await introspect(h, body.access_token as string, {}));
    });

    it('a public client (client_id only) → 401, even for its own token', async () => {
      const { client, body } = await h.tokens();
      expectUnauthorized(await introspect(h, body.access_token as string, { client_id: client.client_id }));
    });

    it('a confidential client with a wrong secret → 401', async () => {
      const { client, body } = await h.tokens({ token_endpoint_auth_method: 'client_secret_post' });
      expectUnauthorized(
        await introspect(h, body.access_token as string, {
          client_id: client.client_id,
          client_secret: 'wrong',
        }),
      );
    });

    it('a configured resource server with a wrong or missing secret → 401', async () => {
      const { body } = await h.tokens();
      const token = body.access_token as string;
      expectUnauthorized(await introspect(h, token, { client_id: RS_CALLER.clientId, client_secret: 'x' }));
      expectUnauthorized(await introspect(h, token, { client_id: RS_CALLER.clientId }));
    });

    it('an unknown client with a secret → 401', async () => {
      const { body } = await h.tokens();
      expectUnauthorized(
        await introspect(h, body.access_token as string, { client_id: 'nobody', client_secret: 'guess' }),
      );
    });

    it('ATK-36: authenticated bulk guessing is rate-limited per caller (429 + Retry-After)', async () => {
      const counts = new Map<string, number>();
      const limiter: RateLimiter = {
        async consume(bucket: RateLimitBucket, key: string) {
          const k = `${bucket}:${key}`;
          const n = (counts.get(k) ?? 0) + 1;
          counts.set(k, n);
          return bucket === 'introspect' && key.startsWith('caller:') && n > 5
            ? { allowed: false, retryAfterSeconds: 30 }
            : { allowed: true };
        },
      };
      await h.close();
      h = await harnessWithIntrospection({ options: { rateLimiter: limiter } });
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await introspect(h, `guess-${i}`)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
      const limited = await introspect(h, 'guess-9');
      expect(limited.headers['retry-after']).toBe('30');
      expect(counts.get(`introspect:caller:${RS_CALLER.clientId}`)).toBe(9);
    });
  });

  describe('INT-02: an active token, seen by an authorized caller (RFC 7662 §2.2; RFC 8707 §2)', () => {
    it('a resource server sees the full set of members; aud is the bound resource', async () => {
      const { client, body } = await h.tokens({}, { resource: MCP });
      const response = await introspect(h, body.access_token as string);
      expect(response.status).toBe(200);
      const data = json(response);
      expect(data).toEqual({
        active: true,
        scope: 'openid profile email courses:read',
        client_id: client.client_id,
        token_type: 'Bearer',
        exp: 1_800_000_000 + 900,
        iat: 1_800_000_000,
        sub: 'ada',
        aud: MCP,
        iss: ISSUER,
        jti: expect.any(String),
      });
    });

    it('without a resource parameter, aud is the default resource (the issuer)', async () => {
      const { body } = await h.tokens();
      expect((await introspection(h, body.access_token as string)).aud).toBe(ISSUER);
    });

    it('a confidential client sees its own access and refresh tokens', async () => {
      const { client, body } = await h.tokens({ token_endpoint_auth_method: 'client_secret_post' });
      const access = json(await introspect(h, body.access_token as string, credentialsOf(client)));
      expect(access).toMatchObject({ active: true, client_id: client.client_id, sub: 'ada', aud: ISSUER });
      const refresh = json(await introspect(h, body.refresh_token as string, credentialsOf(client)));
      expect(refresh).toMatchObject({ active: true, client_id: client.client_id, sub: 'ada' });
    });
  });

  describe('INT-03: anything else is {"active":false} and nothing more (RFC 7662 §2.2, §4)', () => {
    it('expired: active until its expiry, inactive from then on', async () => {
      const { body } = await h.tokens();
      const token = body.access_token as string;
      h.clock.advance(899);
      expect((await introspection(h, token)).active).toBe(true);
      h.clock.advance(1);
      expectInactive(await introspect(h, token));
    });

    it('revoked access token, and the access token of a revoked grant', async () => {
      const a = await h.tokens();
      expect((await revoke(h, a.client, a.body.access_token as string)).status).toBe(200);
      expectInactive(await introspect(h, a.body.access_token as string));
      const b = await h.tokens();
      expect((await revoke(h, b.client, b.body.refresh_token as string)).status).toBe(200);
      expectInactive(await introspect(h, b.body.access_token as string));
    });

    it.each([
      ['unknown', 'A'.repeat(43)],
      ['garbage', '%% not a token'],
      ['oversized', 'x'.repeat(9000)],
    ])('%s token', async (_name, token) => {
      expectInactive(await introspect(h, token));
    });

    it('another client’s token, asked by a confidential client', async () => {
      const victim = await h.tokens();
      const other = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
      expectInactive(await introspect(h, victim.body.access_token as string, credentialsOf(other)));
      expectInactive(await introspect(h, victim.body.refresh_token as string, credentialsOf(other)));
    });

    it('a token for a resource the resource server was not declared for', async () => {
      await h.close();
      h = await harnessWithIntrospection({
        options: {
          introspection: {
            callers: [{ clientId: 'mcp-only', clientSecret: 'mcp-only-secret-0123456789', resources: [MCP] }],
          },
        },
      });
      const forRoot = await h.tokens();
      const forMcp = await h.tokens({}, { resource: MCP });
      const caller = { client_id: 'mcp-only', client_secret: 'mcp-only-secret-0123456789' };
      expectInactive(await introspect(h, forRoot.body.access_token as string, caller));
      expect(json(await introspect(h, forMcp.body.access_token as string, caller)).active).toBe(true);
    });

    it('a refresh token, asked by a resource server (it sees access tokens only)', async () => {
      const { body } = await h.tokens();
      expectInactive(await introspect(h, body.refresh_token as string));
    });

    it('a rotated-out refresh token, asked by its own client', async () => {
      const { client, body } = await h.tokens({ token_endpoint_auth_method: 'client_secret_post' });
      expect((await h.refresh(client, body.refresh_token as string)).status).toBe(200);
      expectInactive(await introspect(h, body.refresh_token as string, credentialsOf(client)));
    });

    it('an ID token or an authorization code', async () => {
      const { body } = await h.tokens();
      expectInactive(await introspect(h, body.id_token as string));
      const client = await h.register();
      const { code } = await h.obtainCode(client);
      expectInactive(await introspect(h, code));
    });
  });

  describe('INT-04: a wrong token_type_hint still resolves (RFC 7662 §2.1)', () => {
    it('an access token sent with hint refresh_token', async () => {
      const { body } = await h.tokens();
      const data = json(
        await introspect(h, body.access_token as string, undefined, { token_type_hint: 'refresh_token' }),
      );
      expect(data.active).toBe(true);
    });

    it('a refresh token sent with hint access_token, by its confidential client', async () => {
      const { client, body } = await h.tokens({ token_endpoint_auth_method: 'client_secret_post' });
      const data = json(
        await introspect(h, body.refresh_token as string, credentialsOf(client), {
          token_type_hint: 'access_token',
        }),
      );
      expect(data.active).toBe(true);
    });

    it('an unknown hint value is ignored', async () => {
      const { body } = await h.tokens();
      expect(
        json(await introspect(h, body.access_token as string, undefined, { token_type_hint: 'nonsense' }))
          .active,
      ).toBe(true);
    });
  });

  describe('INT-05: method, caching and member types (RFC 7662 §2.1, §2.2, §4)', () => {
    it('GET answers 405 with Allow: POST and reveals nothing', async () => {
      const { body } = await h.tokens();
      const response = await h.send({
        method: 'GET',
        url: `${INTROSPECT}?token=${body.access_token as string}&client_id=${RS_CALLER.clientId}&client_secret=${RS_CALLER.clientSecret}`,
      });
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('POST');
      expect(response.body).not.toContain('active');
    });

    it('active responses are no-store, exp/iat integer seconds, scope one space-separated string', async () => {
      const { body } = await h.tokens();
      const response = await introspect(h, body.access_token as string);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const data = json(response);
      expect(Number.isInteger(data.exp)).toBe(true);
      expect(Number.isInteger(data.iat)).toBe(true);
      expect(data.scope).toBe('openid profile email courses:read');
      expect(typeof data.scope).toBe('string');
    });

    it('a missing token parameter is 400 invalid_request', async () => {
      const response = await introspect(h, undefined);
      expect(response.status).toBe(400);
      expect(json(response).error).toBe('invalid_request');
    });
  });

  it('ATK-34: a revoked token is inactive at introspection, 401 at the guard and at userinfo', async () => {
    const { client, body } = await h.tokens();
    const token = body.access_token as string;
    const guard = h.server.guard({ resource: ISSUER });
    expect((await guard.check({ headers: { authorization: `Bearer ${token}` } })).ok).toBe(true);
    expect((await revoke(h, client, token)).status).toBe(200);
    expectInactive(await introspect(h, token));
    const refused = await guard.check({ headers: { authorization: `Bearer ${token}` } });
    expect(refused.ok).toBe(false);
    expect(refused.ok ? 0 : refused.response.status).toBe(401);
    expect((await userinfo(h, token)).status).toBe(401);
  });
});
