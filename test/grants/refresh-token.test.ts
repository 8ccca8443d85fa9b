import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Harness, ISSUER, json, type RegisteredClient } from '../helpers/harness.js';
import { SPEC_PATHS } from '../helpers/spec-paths.js';
import type { TestResponse } from '../helpers/transports.js';

let h: Harness;
/** The default grace window, in seconds. */
const GRACE = 10;

beforeEach(async () => {
  h = await Harness.start();
});
afterEach(() => h.close());

function expectError(response: TestResponse, error: string) {
  expect(response.status).toBe(400);
  expect(response.headers['cache-control']).toBe('no-store');
  expect(json(response).error).toBe(error);
}

async function introspectActive(client: RegisteredClient, token: string): Promise<boolean> {
  return json(await h.introspect(client, token)).active === true;
}

async function confidentialTokens(extra: Record<string, string | undefined> = {}) {
  return h.tokens({ token_endpoint_auth_method: 'client_secret_post' }, extra);
}

describe('refresh_token grant (RFC 6749 §6, OAuth 2.1 §4.3)', () => {
  it('RT-01 rotates: a new access token and a new refresh token; the old one then fails', async () => {
    const { client, body } = await h.tokens();
    const response = await h.refresh(client, body.refresh_token as string);
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const next = json(response);
    expect(next.access_token).not.toBe(body.access_token);
    expect(next.refresh_token).not.toBe(body.refresh_token);
    expect(next.scope).toBe(body.scope);
    expect(next.id_token).toBeUndefined();
    // Past the grace window (10 s by default), the old token is refused.
    h.clock.advance(GRACE);
    expectError(await h.refresh(client, body.refresh_token as string), 'invalid_grant');
  });

  it('RT-02 ATK-17 replaying a rotated-out token revokes the grant: the successor and all access tokens die', async () => {
    const { client, body } = await confidentialTokens();
    const r2 = json(await h.refresh(client, body.refresh_token as string));
    expect(await introspectActive(client, r2.access_token as string)).toBe(true);
    h.clock.advance(GRACE);
    expectError(await h.refresh(client, body.refresh_token as string), 'invalid_grant');
    expectError(await h.refresh(client, r2.refresh_token as string), 'invalid_grant');
    expect(await introspectActive(client, r2.access_token as string)).toBe(false);
    expect(await introspectActive(client, body.access_token as string)).toBe(false);
    expect(h.events.some((e) => e.type === 'refresh.reuse_detected')).toBe(true);
  });

  it('RT-03 ATK-21 scope may narrow (reported), never widen; the new refresh token keeps the full grant', async () => {
    const { client, body } = await h.tokens();
    expectError(
      await h.refresh(client, body.refresh_token as string, { scope: 'openid account:write' }),
      'invalid_scope',
    );
    const narrow = json(await h.refresh(client, body.refresh_token as string, { scope: 'courses:read' }));
    expect(narrow.scope).toBe('courses:read');
    const full = json(await h.refresh(client, narrow.refresh_token as string));
    expect(full.scope).toBe('openid profile email courses:read');
  });

  it('RT-04 ATK-23 a refresh token of client A presented by client B → invalid_grant, and A keeps it', async () => {
    const { client, body } = await h.tokens();
    const other = await h.register();
    expectError(await h.refresh(other, body.refresh_token as string), 'invalid_grant');
    expect((await h.refresh(client, body.refresh_token as string)).status).toBe(200);
  });

  it('RT-05 a confidential client refreshing without or with a wrong secret → invalid_client', async () => {
    const { client, body } = await confidentialTokens();
    const without = await h.refresh(client, body.refresh_token as string, { client_secret: undefined });
    expect(json(without).error).toBe('invalid_client');
    const wrong = await h.refresh(client, body.refresh_token as string, { client_secret: 'nope' });
    expect(json(wrong).error).toBe('invalid_client');
    expect((await h.refresh(client, body.refresh_token as string)).status).toBe(200);
  });

  it('RT-06 a revoked, expired, unknown refresh token, or an access token sent as one → invalid_grant', async () => {
    const { client, body } = await h.tokens();
    expectError(await h.refresh(client, body.access_token as string), 'invalid_grant');
    expectError(await h.refresh(client, 'unknown-token'), 'invalid_grant');
    await h.send({
      method: 'POST',
      url: '/api/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: body.refresh_token as string,
        client_id: client.client_id,
      }).toString(),
    });
    expectError(await h.refresh(client, body.refresh_token as string), 'invalid_grant');
  });

  it('RT-07 resource at refresh is limited to the grant; access tokens stay audience-bound', async () => {
    const { client, body } = await h.tokens({}, { resource: `${ISSUER}/mcp` });
    expectError(
      await h.refresh(client, body.refresh_token as string, { resource: ISSUER }),
      'invalid_target',
    );
    const next = json(await h.refresh(client, body.refresh_token as string, { resource: `${ISSUER}/mcp` }));
    const claims = JSON.parse(
      Buffer.from((next.access_token as string).split('.')[1]!, 'base64url').toString(),
    );
    expect(claims.aud).toBe(`${ISSUER}/mcp`);
  });

  it('RT-08 idle expiry (30 days without use) and the absolute lifetime (90 days) end the grant', async () => {
    const { client, body } = await h.tokens();
    h.clock.advance(30 * 86400 + 1);
    expectError(await h.refresh(client, body.refresh_token as string), 'invalid_grant');

    const second = await h.tokens();
    let token = second.body.refresh_token as string;
    // Used every 20 days, it survives idle expiry, but not the 90-day cap.
    for (let day = 20; day < 90; day += 20) {
      h.clock.advance(20 * 86400);
      const next = await h.refresh(second.client, token);
      expect(next.status).toBe(200);
      token = json(next).refresh_token as string;
    }
    h.clock.advance(20 * 86400);
    expectError(await h.refresh(second.client, token), 'invalid_grant');
  });

  it('ATK-18 without a grace window, two concurrent refreshes with one token: exactly one succeeds, and the other is reuse that revokes the grant', async () => {
    const g = await Harness.start({ options: { tokens: { refreshGraceSeconds: 0 } } });
    try {
      const { client, body } = await g.tokens();
      const results = await Promise.all([
        g.refresh(client, body.refresh_token as string),
        g.refresh(client, body.refresh_token as string),
      ]);
      const winners = results.filter((r) => r.status === 200);
      expect(winners).toHaveLength(1);
      expectError(results.find((r) => r.status !== 200)!, 'invalid_grant');
      expect(g.events.filter((e) => e.type === 'refresh.reuse_detected')).toHaveLength(1);
      expectError(await g.refresh(client, json(winners[0]!).refresh_token as string), 'invalid_grant');
    } finally {
      await g.close();
    }
  });

  it('a refresh survives a restart of the server when storage does', async () => {
    const { client, body } = await h.tokens();
    const { createAuthorizationServer } = await import('../../src/server.js');
    const restarted = await createAuthorizationServer({
      issuer: ISSUER,
      storage: h.storage,
      paths: SPEC_PATHS,
      clock: h.clock.ms,
      housekeepingIntervalSeconds: 0,
    });
    const response = await restarted.handle({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: body.refresh_token as string,
        client_id: client.client_id,
      }).toString(),
    });
    expect(response?.status).toBe(200);
    await restarted.close();
  });
});

describe('refresh grace window (tokens.refreshGraceSeconds, default 10 s; FLT-03)', () => {
  it('is on by default: a retry after a lost response gets the same successor and a new access token', async () => {
    const { client, body } = await confidentialTokens();
    const lost = json(await h.refresh(client, body.refresh_token as string));
    h.clock.advance(GRACE - 1);
    const retry = await h.refresh(client, body.refresh_token as string);
    expect(retry.status).toBe(200);
    const second = json(retry);
    expect(second.refresh_token).toBe(lost.refresh_token);
    expect(second.access_token).not.toBe(lost.access_token);
    expect(await introspectActive(client, second.access_token as string)).toBe(true);
    // Not a reuse: the grant lives on, and the one successor keeps working.
    expect(h.events.some((e) => e.type === 'refresh.reuse_detected')).toBe(false);
    expect((await h.refresh(client, second.refresh_token as string)).status).toBe(200);
  });

  it('RT-02 after the window, the same token is reuse: the grant, the successor and every access token die', async () => {
    const { client, body } = await confidentialTokens();
    const next = json(await h.refresh(client, body.refresh_token as string));
    h.clock.advance(GRACE);
    expectError(await h.refresh(client, body.refresh_token as string), 'invalid_grant');
    expect(h.events.some((e) => e.type === 'refresh.reuse_detected')).toBe(true);
    expectError(await h.refresh(client, next.refresh_token as string), 'invalid_grant');
    expect(await introspectActive(client, next.access_token as string)).toBe(false);
  });

  it('RT-04 within the window, another client presenting the rotated token is reuse: the grant is revoked', async () => {
    const { client, body } = await h.tokens();
    const next = json(await h.refresh(client, body.refresh_token as string));
    const other = await h.register();
    expectError(await h.refresh(other, body.refresh_token as string), 'invalid_grant');
    expectError(await h.refresh(client, next.refresh_token as string), 'invalid_grant');
  });

  it('parallel retries within the window: one rotation, and every caller gets the same successor', async () => {
    const { client, body } = await h.tokens();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => h.refresh(client, body.refresh_token as string)),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const successors = new Set(results.map((r) => json(r).refresh_token));
    expect(successors.size).toBe(1);
    expect(h.events.filter((e) => e.type === 'refresh.rotated')).toHaveLength(1);
    expect(new Set(results.map((r) => json(r).access_token)).size).toBe(5);
    expect((await h.refresh(client, [...successors][0] as string)).status).toBe(200);
  });

  it('a retry within the window after the grant was revoked is refused', async () => {
    const { client, body } = await h.tokens();
    const next = json(await h.refresh(client, body.refresh_token as string));
    await h.send({
      method: 'POST',
      url: '/api/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: next.refresh_token as string,
        client_id: client.client_id,
      }).toString(),
    });
    expectError(await h.refresh(client, body.refresh_token as string), 'invalid_grant');
  });

  it('with refreshGraceSeconds: 0 an immediate identical retry is reuse', async () => {
    const g = await Harness.start({ options: { tokens: { refreshGraceSeconds: 0 } } });
    try {
      const { client, body } = await g.tokens();
      expect((await g.refresh(client, body.refresh_token as string)).status).toBe(200);
      expectError(await g.refresh(client, body.refresh_token as string), 'invalid_grant');
      expect(g.events.some((e) => e.type === 'refresh.reuse_detected')).toBe(true);
    } finally {
      await g.close();
    }
  });

  it('the sealed successor is useless without the predecessor: storage holds no readable token', async () => {
    const { client, body } = await h.tokens();
    const next = json(await h.refresh(client, body.refresh_token as string));
    const { tokenKey } = await import('../../src/tokens/token-key.js');
    const old = await h.storage.grants.getRefreshToken(
      await tokenKey(body.refresh_token as string),
      h.clock.now(),
    );
    expect(old?.sealedSuccessor).toBeDefined();
    expect(old?.sealedSuccessor).not.toContain(next.refresh_token as string);
    const { openSuccessor } = await import('../../src/tokens/refresh-token.js');
    expect(await openSuccessor('not-the-predecessor', old!.sealedSuccessor!)).toBeUndefined();
    expect(await openSuccessor(body.refresh_token as string, old!.sealedSuccessor!)).toBe(next.refresh_token);
  });
});

describe('ID tokens on refresh (tokens.idTokenOnRefresh, OIDC Core §12.2)', () => {
  it('carry the auth_time of the original login, read with the refresh token', async () => {
    const g = await Harness.start({ options: { tokens: { idTokenOnRefresh: true } } });
    try {
      const { client, body } = await g.tokens();
      const first = JSON.parse(Buffer.from(String(body.id_token).split('.')[1]!, 'base64url').toString());
      g.clock.advance(3600);
      const refreshed = json(await g.refresh(client, body.refresh_token as string));
      const claims = JSON.parse(
        Buffer.from(String(refreshed.id_token).split('.')[1]!, 'base64url').toString(),
      );
      expect(claims.auth_time).toBe(first.auth_time);
      expect(claims.iat).toBe(first.iat + 3600);
    } finally {
      await g.close();
    }
  });
});

describe('refresh of a token this server issued (grants/recently-issued.ts)', () => {
  /** A server whose storage calls are recorded, with tokens for one client. */
  async function recorded() {
    const { recordingStorage } = await import('../helpers/recording-storage.js');
    const recording = recordingStorage();
    const g = await Harness.start({ storage: recording.storage });
    const { client, body } = await g.tokens();
    const { tokenKey } = await import('../../src/tokens/token-key.js');
    const hash = await tokenKey(body.refresh_token as string);
    recording.calls.length = 0;
    return { g, calls: recording.calls, client, body, hash };
  }

  it('reads nothing before the rotation, for the first refresh and for each successor', async () => {
    const { g, calls, client, body } = await recorded();
    try {
      const first = json(await g.refresh(client, body.refresh_token as string));
      const second = await g.refresh(client, first.refresh_token as string);
      expect(second.status).toBe(200);
      expect(calls.filter((call) => call.startsWith('grants.'))).toEqual([
        'grants.rotateRefreshToken',
        'grants.rotateRefreshToken',
      ]);
    } finally {
      await g.close();
    }
  });

  it('ATK-17 still refuses it once its grant was revoked elsewhere (another instance, an admin): nothing is issued', async () => {
    const { g, client, body, hash } = await recorded();
    try {
      const record = await g.storage.grants.getRefreshToken(hash, g.clock.now());
      // Straight in storage, as another instance would: this server's memory is not told.
      expect(await g.storage.grants.revoke(record!.grantId, g.clock.now())).toBe(true);
      expectError(await g.refresh(client, body.refresh_token as string), 'invalid_grant');
      expect(g.events.some((e) => e.type === 'token.issued' && e.grantType === 'refresh_token')).toBe(false);
      const { tokenKey } = await import('../../src/tokens/token-key.js');
      expect(
        await g.storage.grants.getAccessToken(await tokenKey(body.access_token as string), g.clock.now()),
      ).toBeNull();
    } finally {
      await g.close();
    }
  });

  it('RT-02 a token another instance already rotated is reuse past the grace window: the grant is revoked', async () => {
    const { g, client, body, hash } = await recorded();
    try {
      const { fixtures } = await import('../../src/testing/index.js');
      const record = await g.storage.grants.getRefreshToken(hash, g.clock.now());
      const grant = await g.storage.grants.get(record!.grantId);
      const elsewhere = {
        tokenHash: hash,
        successor: fixtures.refreshToken(grant!, { issuedAt: g.clock.now() }),
        accessToken: fixtures.accessToken(grant!, { issuedAt: g.clock.now() }),
        now: g.clock.now(),
      };
      expect(await g.storage.grants.rotateRefreshToken(elsewhere)).toEqual({ outcome: 'rotated' });
      g.clock.advance(GRACE);
      expectError(await g.refresh(client, body.refresh_token as string), 'invalid_grant');
      expect(g.events.some((e) => e.type === 'refresh.reuse_detected')).toBe(true);
      expect((await g.storage.grants.get(record!.grantId))?.revokedAt).toBeDefined();
      expect(
        await g.storage.grants.getAccessToken(elsewhere.accessToken.tokenHash, g.clock.now()),
      ).toBeNull();
    } finally {
      await g.close();
    }
  });

  it('refuses it once expired, as storage would', async () => {
    const { g, client, body } = await recorded();
    try {
      const record = await g.storage.grants.getRefreshToken(
        await (await import('../../src/tokens/token-key.js')).tokenKey(body.refresh_token as string),
        g.clock.now(),
      );
      g.clock.advance(record!.expiresAt - g.clock.now());
      expectError(await g.refresh(client, body.refresh_token as string), 'invalid_grant');
    } finally {
      await g.close();
    }
  });
});
