/**
 * Token keys (src/tokens/token-key.ts): a token this release issues carries the time it was made,
 * and its storage key starts with that time, so new keys sort after old ones in the storage's
 * indexes; tokens of earlier releases, stored under their bare hash, keep working.
 */
import { importJWK, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { randomToken, secureRandom, sha256 } from '../../src/core/crypto.js';
import { tokenKey } from '../../src/index.js';
import { digestOfKey, mintedJwtKey, mintJti, mintOpaqueToken } from '../../src/tokens/token-key.js';
import { harnessWithIntrospection, introspect, revoke, userinfo } from '../helpers/endpoints.js';
import { type Harness, ISSUER, json } from '../helpers/harness.js';
import { TEST_KEYS } from '../helpers/keys.js';
import { seedGrant } from '../helpers/seed-grant.js';

const T = Date.UTC(2026, 11, 6, 3, 0, 0);

describe('tokenKey', () => {
  it('an opaque token starts with its time, and its key is that time then the SHA-256 of the whole token', async () => {
    const token = mintOpaqueToken(secureRandom, T);
    expect(token).toMatch(/^[A-Za-z0-9_-]{51}$/);
    expect(await tokenKey(token)).toBe(token.slice(0, 8) + (await sha256(token)));
    expect(digestOfKey(await tokenKey(token))).toBe(await sha256(token));
  });

  it('keys of tokens made later sort after (byte order), from a millisecond to years apart', async () => {
    const times = [T, T + 1, T + 63, T + 64, T + 1000, T + 86_400_000, T + 400 * 86_400_000];
    for (const [mint, label] of [
      [async (t: number) => mintOpaqueToken(secureRandom, t), 'opaque'],
      [(t: number) => signed({ jti: mintJti(secureRandom, t) }), 'JWT'],
    ] as const) {
      const keys = await Promise.all(times.map(async (t) => (await tokenKey(await mint(t))).slice(0, 8)));
      const byte = (s: string) => Buffer.from(s, 'latin1');
      for (let i = 1; i < keys.length; i++) {
        expect(Buffer.compare(byte(keys[i - 1]!), byte(keys[i]!)), `${label} ${i}`).toBe(-1);
      }
    }
  });

  it("a JWT's key starts with the time of its jti; mintedJwtKey gives the key the token is looked up by", async () => {
    const jti = mintJti(secureRandom, T);
    expect(jti).toMatch(/^[A-Za-z0-9_-]{30}$/);
    const jwt = await signed({ jti });
    expect(await tokenKey(jwt)).toBe(jti.slice(0, 8) + (await sha256(jwt)));
    expect(await mintedJwtKey(jwt, jti)).toBe(await tokenKey(jwt));
  });

  it('a token of an earlier release (43 random characters, or a JWT whose jti is 22) keeps its bare hash as key', async () => {
    const opaque = randomToken(secureRandom, 32);
    expect(await tokenKey(opaque)).toBe(await sha256(opaque));
    const jwt = await signed({ iss: ISSUER, jti: randomToken(secureRandom, 16) });
    expect(await tokenKey(jwt)).toBe(await sha256(jwt));
    // The time is read only from a jti that opens the payload, as this release signs it.
    const later = await signed({ iss: ISSUER, jti: mintJti(secureRandom, T) });
    expect(await tokenKey(later)).toBe(await sha256(later));
  });

  it('anything else is keyed by its bare hash, without throwing: malformed JWTs, odd lengths, an odd jti', async () => {
    for (const token of [
      '',
      'a.b.c',
      'abc.',
      `x.${Buffer.from(`{"jti":"${'A'.repeat(30)}`).toString('base64url')}`,
      `x.${Buffer.from(`{"jti":"${'A'.repeat(31)}"}`).toString('base64url')}.y`,
      `x.${Buffer.from(`{"jti":"${'A'.repeat(29)}+"}`).toString('base64url')}.y`,
      `x.${'*'.repeat(60)}.y`,
      `x.${'A'.repeat(57)}.y`,
      'e30.e30.',
      `eyJhbGciOiJub25lIn0.${Buffer.from('[1]').toString('base64url')}.x`,
      `eyJhbGciOiJub25lIn0.${Buffer.from('{"jti":42}').toString('base64url')}.x`,
      `eyJhbGciOiJub25lIn0.${Buffer.from(`{"sub":"a","jti":"${'A'.repeat(30)}"}`).toString('base64url')}.x`,
      `eyJhbGciOiJub25lIn0.${Buffer.from(`{"jti":"${'é'.repeat(30)}"}`).toString('base64url')}.x`,
      'x'.repeat(50),
      'x'.repeat(52),
      `${'x'.repeat(8200)}.e30.x`,
    ]) {
      expect(await tokenKey(token), token.slice(0, 40)).toBe(await sha256(token));
    }
  });
});

/** A JWT signed with the harness's ES256 key, as the server signs access tokens. */
async function signed(claims: Record<string, unknown>): Promise<string> {
  const jwk = TEST_KEYS.privateJwks!.find((k) => k.alg === 'ES256')!;
  const now = Math.floor(T / 1000);
  return new SignJWT({ ...claims, client_id: 'c', scope: 'openid' })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: String(jwk.kid) })
    .setIssuer(ISSUER)
    .setSubject('ada')
    .setAudience(ISSUER)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(await importJWK(jwk, 'ES256'));
}

describe('tokens as the server issues and reads them', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("tokens are stored under keys that start with their time: a refresh token's own, a JWT access token's jti", async () => {
    h = await harnessWithIntrospection();
    const { client, body } = await h.tokens();
    const refresh = body.refresh_token as string;
    const access = body.access_token as string;
    expect(refresh).toMatch(/^[A-Za-z0-9_-]{51}$/);
    const now = h.clock.now();
    const stored = await h.storage.grants.getRefreshToken(refresh.slice(0, 8) + (await sha256(refresh)), now);
    expect(stored?.clientId).toBe(client.client_id);
    const jti = JSON.parse(Buffer.from(access.split('.')[1]!, 'base64url').toString()).jti as string;
    expect(jti).toMatch(/^[A-Za-z0-9_-]{30}$/);
    expect((await h.storage.grants.getAccessToken(jti.slice(0, 8) + (await sha256(access)), now))?.jti).toBe(
      jti,
    );
    // And nothing under the bare hash, which a token with its time stripped would be looked up by.
    expect(await h.storage.grants.getRefreshToken(await sha256(refresh), now)).toBeNull();
  });

  it('opaque access tokens too (tokens.accessTokenFormat: opaque): UserInfo, introspection and revocation find them', async () => {
    h = await harnessWithIntrospection({ options: { tokens: { accessTokenFormat: 'opaque' } } });
    const { client, body } = await h.tokens();
    const access = body.access_token as string;
    expect(access).toMatch(/^[A-Za-z0-9_-]{51}$/);
    expect((await h.storage.grants.getAccessToken(await tokenKey(access), h.clock.now()))?.clientId).toBe(
      client.client_id,
    );
    expect((await userinfo(h, access)).status).toBe(200);
    expect(json(await introspect(h, access)).active).toBe(true);
    expect((await revoke(h, client, access)).status).toBe(200);
    expect((await userinfo(h, access)).status).toBe(401);
  });

  it('a refresh token whose time was altered is not found: invalid_grant, and the real one still refreshes', async () => {
    h = await harnessWithIntrospection();
    const { client, body } = await h.tokens();
    const refresh = body.refresh_token as string;
    const altered = refresh.slice(0, 7) + (refresh[7] === 'A' ? 'B' : 'A') + refresh.slice(8);
    expect(altered).not.toBe(refresh);
    const refused = await h.refresh(client, altered);
    expect(refused.status).toBe(400);
    expect(json(refused).error).toBe('invalid_grant');
    expect(h.events.some((e) => e.type === 'grant.revoked')).toBe(false);
    expect((await h.refresh(client, refresh)).status).toBe(200);
  });

  it('a JWT access token whose jti was altered (so its signature no longer holds) is inactive and revokes nothing', async () => {
    h = await harnessWithIntrospection();
    const { client, body } = await h.tokens();
    const access = body.access_token as string;
    const [header, payload, signature] = access.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, jti: `B${claims.jti.slice(1)}` })).toString('base64url')}.${signature}`;
    expect(json(await introspect(h, forged)).active).toBe(false);
    expect((await userinfo(h, forged)).status).toBe(401);
    expect((await revoke(h, client, forged)).status).toBe(200);
    expect((await userinfo(h, access)).status).toBe(200);
  });

  it('tokens.timeInTokens: false issues tokens as earlier releases (43 characters, a 22-character jti, bare-hash keys) for a rolling deploy', async () => {
    h = await harnessWithIntrospection({ options: { tokens: { timeInTokens: false } } });
    const { client, body } = await h.tokens();
    const refresh = body.refresh_token as string;
    const access = body.access_token as string;
    expect(refresh).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const jti = JSON.parse(Buffer.from(access.split('.')[1]!, 'base64url').toString()).jti as string;
    expect(jti).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // Where an earlier release looks them up: under their bare hash.
    const now = h.clock.now();
    expect((await h.storage.grants.getRefreshToken(await sha256(refresh), now))?.clientId).toBe(
      client.client_id,
    );
    expect((await h.storage.grants.getAccessToken(await sha256(access), now))?.jti).toBe(jti);
    expect((await userinfo(h, access)).status).toBe(200);
    expect((await h.refresh(client, refresh)).status).toBe(200);
  });

  it('tokens an earlier release issued and stored under their bare hash keep working after the upgrade', async () => {
    h = await harnessWithIntrospection();
    const client = await h.register();
    const now = h.clock.now();
    const grantId = 'grant-from-an-earlier-release';
    const oldRefresh = randomToken(secureRandom, 32);
    const oldJti = randomToken(secureRandom, 16);
    const oldAccess = await signed({ iss: ISSUER, jti: oldJti, client_id: client.client_id });
    const grant = {
      grantId,
      clientId: client.client_id,
      userId: 'ada',
      scope: ['openid', 'email'],
      resources: [ISSUER],
      authTime: now,
      createdAt: now,
      expiresAt: now + 86_400,
    };
    await seedGrant(
      h.storage,
      grant,
      {
        tokenHash: await sha256(oldAccess),
        jti: oldJti,
        grantId,
        clientId: client.client_id,
        userId: 'ada',
        scope: grant.scope,
        audience: [ISSUER],
        issuedAt: now,
        expiresAt: now + 3600,
      },
      {
        tokenHash: await sha256(oldRefresh),
        grantId,
        clientId: client.client_id,
        userId: 'ada',
        scope: grant.scope,
        resources: [ISSUER],
        authTime: now,
        issuedAt: now,
        expiresAt: now + 86_400,
      },
    );
    expect((await userinfo(h, oldAccess)).status).toBe(200);
    expect(json(await introspect(h, oldAccess))).toMatchObject({ active: true, jti: oldJti });
    const refreshed = await h.refresh(client, oldRefresh);
    expect(refreshed.status).toBe(200);
    // Its successor is of this release, and the old token is now rotated (reuse past the window).
    const successor = json(refreshed).refresh_token as string;
    expect(successor).toMatch(/^[A-Za-z0-9_-]{51}$/);
    expect((await h.storage.grants.getRefreshToken(await sha256(oldRefresh), h.clock.now()))?.rotatedAt).toBe(
      now,
    );
    expect((await revoke(h, client, oldAccess)).status).toBe(200);
    expect((await userinfo(h, oldAccess)).status).toBe(401);
  });
});
