/**
 * FLT-02: nothing that can fail runs after a grant's commit point. A storage wrapper makes the
 * N-th storage call of a token request fail, for every N, either before the call takes effect (the
 * database was unreachable) or after (the write committed, its answer was lost). Whatever fails,
 * the client gets its tokens, all of them persisted, or a 5xx and a retry with the same code or
 * refresh token that succeeds: no grant is revoked unless a client misused one. A code whose
 * redemption committed is retried as a client told `Retry-After` would: after that wait, and then
 * it gets the very response it lost (the code grace window, `tokens.codeGraceSeconds`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/core/context.js';
import { sha256 } from '../../src/core/crypto.js';
import type { AuthorizationServerOptions } from '../../src/options.js';
import { memoryStorage } from '../../src/storage/memory.js';
import type { Storage } from '../../src/storage/types.js';
import { STORAGE_RETRY_AFTER_SECONDS, StorageUnavailableError } from '../../src/storage/unavailable.js';
import { Harness, json, pkce, type RegisteredClient } from '../helpers/harness.js';
import type { TestResponse } from '../helpers/transports.js';

/** When an injected failure strikes: instead of the call, or after it took effect. */
type Mode = 'before' | 'after';

/** A storage whose calls are counted once armed; the call numbered `failAt` fails. */
function failingStorage(inner: Storage = memoryStorage()) {
  const state = {
    armed: false,
    count: 0,
    failAt: -1,
    mode: 'before' as Mode,
    error: undefined as Error | undefined,
    calls: [] as string[],
  };
  const wrap = <T extends object>(target: T, prefix: string): T =>
    new Proxy(target, {
      get(object, name, receiver) {
        const value = Reflect.get(object, name, receiver) as unknown;
        if (typeof value !== 'function' || typeof name !== 'string') return value;
        return async (...args: unknown[]) => {
          const call = () => (value as (...a: unknown[]) => Promise<unknown>).apply(object, args);
          if (!state.armed) return call();
          const n = state.count++;
          state.calls.push(`${prefix}${name}`);
          if (n !== state.failAt) return call();
          if (state.mode === 'after') await call();
          throw state.error ?? new Error(`injected failure of ${prefix}${name}`);
        };
      },
    });
  const storage: Storage = {
    clients: wrap(inner.clients, 'clients.'),
    interactions: wrap(inner.interactions, 'interactions.'),
    codes: wrap(inner.codes, 'codes.'),
    grants: wrap(inner.grants, 'grants.'),
    consents: wrap(inner.consents, 'consents.'),
    keys: wrap(inner.keys, 'keys.'),
    replay: wrap(inner.replay, 'replay.'),
    deleteExpired: (now) => inner.deleteExpired(now),
    close: () => inner.close(),
  };
  return {
    storage,
    /** Counts calls from now on; the `failAt`-th (0-based) fails, `mode` says how, with `error` if given. */
    arm(failAt: number, mode: Mode = 'before', error?: Error) {
      Object.assign(state, { armed: true, count: 0, failAt, mode, error, calls: [] });
    },
    disarm() {
      state.armed = false;
    },
    /** The calls made since armed. */
    calls: () => [...state.calls],
  };
}

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

/** A server on a failing storage, its keys already in use, and a warning log. */
async function setUp(options: Partial<AuthorizationServerOptions> = {}) {
  const failing = failingStorage();
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (message) => warnings.push(message), error() {} };
  const h = await Harness.start({ storage: failing.storage, options: { logger, ...options } });
  harnesses.push(h);
  await h.tokens(); // keys generated and read back: not part of the steps under test
  const client = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
  return { h, failing, warnings, client };
}

/** What a broken connection under a committed write looks like: whether it applied is unknown. */
const lostAnswer = () =>
  new StorageUnavailableError('connection_lost', 'injected: the connection broke after the commit');

async function active(h: Harness, client: RegisteredClient, token: string): Promise<boolean> {
  return json(await h.introspect(client, token)).active === true;
}

/** A failed token request: a 5xx with an OAuth error the client may retry on. */
function expectRetryableError(response: TestResponse) {
  expect(response.status).toBeGreaterThanOrEqual(500);
  expect(['server_error', 'temporarily_unavailable']).toContain(json(response).error);
}

/** Tokens of a 200 that are persisted: the access token is active, the refresh token refreshes. */
async function expectPersisted(h: Harness, client: RegisteredClient, response: TestResponse) {
  expect(response.status).toBe(200);
  const body = json(response);
  expect(await active(h, client, String(body.access_token))).toBe(true);
  const next = await h.refresh(client, String(body.refresh_token));
  expect(next.status).toBe(200);
  expect(await active(h, client, String(json(next).access_token))).toBe(true);
}

describe('FLT-02 a storage failure at any step of the authorization_code grant', () => {
  it('each step is one storage call: read the code, redeem it, then clear the new client’s expiry', async () => {
    const s = await setUp();
    const { code, pkce } = await s.h.obtainCode(s.client);
    s.failing.arm(-1);
    expect((await s.h.exchange(s.client, code, pkce)).status).toBe(200);
    expect(s.failing.calls()).toEqual(['codes.get', 'codes.redeem', 'clients.clearExpiry']);
  });

  for (const [n, step] of ['codes.get', 'codes.redeem', 'clients.clearExpiry'].entries()) {
    it(`${step} failing before it takes effect: tokens all persisted, or a 5xx whose retry with the same code succeeds, no grant revoked`, async () => {
      const s = await setUp();
      const { code, pkce } = await s.h.obtainCode(s.client);
      s.failing.arm(n, 'before');
      const first = await s.h.exchange(s.client, code, pkce);
      s.failing.disarm();
      expect(s.failing.calls()[n]).toBe(step);
      if (first.status === 200) {
        await expectPersisted(s.h, s.client, first);
      } else {
        expectRetryableError(first);
        await expectPersisted(s.h, s.client, await s.h.exchange(s.client, code, pkce));
      }
      expect(s.h.events.filter((e) => e.type === 'grant.revoked')).toEqual([]);
    });
  }

  it('clients.clearExpiry failing is only bookkeeping: 200, a warning, and the next token request clears the expiry', async () => {
    const s = await setUp();
    const { code, pkce } = await s.h.obtainCode(s.client);
    s.failing.arm(2, 'before');
    const response = await s.h.exchange(s.client, code, pkce);
    s.failing.disarm();
    expect(response.status).toBe(200);
    expect(s.warnings.some((w) => w.includes('expiry of a used client'))).toBe(true);
    const stored = async () => s.h.storage.clients.get(s.client.client_id, s.h.clock.now());
    expect((await stored())?.expiresAt).toBeDefined();
    expect((await s.h.refresh(s.client, String(json(response).refresh_token))).status).toBe(200);
    expect((await stored())?.expiresAt).toBeUndefined();
  });

  for (const [n, step] of ['codes.get', 'codes.redeem', 'clients.clearExpiry'].entries()) {
    it(`${step} failing after it takes effect: tokens all persisted, or a 503 whose retry after Retry-After with the same code succeeds, no grant revoked`, async () => {
      const s = await setUp();
      const { code, pkce } = await s.h.obtainCode(s.client);
      s.failing.arm(n, 'after', lostAnswer());
      const first = await s.h.exchange(s.client, code, pkce);
      s.failing.disarm();
      expect(s.failing.calls()[n]).toBe(step);
      if (first.status === 200) {
        await expectPersisted(s.h, s.client, first);
      } else {
        expectRetryableError(first);
        s.h.clock.advance(Number(first.headers['retry-after']));
        await expectPersisted(s.h, s.client, await s.h.exchange(s.client, code, pkce));
      }
      expect(s.h.events.filter((e) => e.type === 'grant.revoked')).toEqual([]);
    });
  }

  it('codes.get failing after it took effect (a read): a 5xx, and the retry succeeds', async () => {
    const s = await setUp();
    const { code, pkce } = await s.h.obtainCode(s.client);
    s.failing.arm(0, 'after');
    expectRetryableError(await s.h.exchange(s.client, code, pkce));
    s.failing.disarm();
    await expectPersisted(s.h, s.client, await s.h.exchange(s.client, code, pkce));
    expect(s.h.events.filter((e) => e.type === 'grant.revoked')).toEqual([]);
  });

  it('TOK-13 a late replay, after the code expired, still revokes everything the first redemption issued', async () => {
    const s = await setUp();
    const { code, pkce } = await s.h.obtainCode(s.client);
    const first = json(await s.h.exchange(s.client, code, pkce));
    s.h.clock.advance(60 + 300); // the code lived 60 s; five minutes later
    const replay = await s.h.exchange(s.client, code, pkce);
    expect(replay.status).toBe(400);
    expect(json(replay).error).toBe('invalid_grant');
    expect(await active(s.h, s.client, String(first.access_token))).toBe(false);
    expect(json(await s.h.refresh(s.client, String(first.refresh_token))).error).toBe('invalid_grant');
    expect(s.h.events.some((e) => e.type === 'code.replayed')).toBe(true);
  });
});

describe('FLT-02 TOK-13 codes.redeem committed and its answer lost: the retry gets the same response, a replay still revokes', () => {
  /**
   * A code whose redemption committed while its answer was lost (on PostgreSQL: the connection
   * broke under the statement, and under its one repetition too): the client got a 503.
   */
  async function lostRedemption(options: Partial<AuthorizationServerOptions> = {}) {
    const s = await setUp(options);
    const { code, pkce } = await s.h.obtainCode(s.client);
    s.failing.arm(1, 'after', lostAnswer());
    const lost = await s.h.exchange(s.client, code, pkce);
    s.failing.disarm();
    expect(s.failing.calls()[1]).toBe('codes.redeem');
    expectRetryableError(lost);
    expect(lost.status).toBe(503);
    expect(lost.headers['retry-after']).toBe(String(STORAGE_RETRY_AFTER_SECONDS));
    const stored = await s.h.storage.codes.get(await sha256(code), s.h.clock.now());
    expect(stored?.consumedAt).toBe(s.h.clock.now());
    return { ...s, code, pkce, grantId: stored!.grantId };
  }

  const revocations = (h: Harness) => h.events.filter((e) => e.type === 'grant.revoked');

  it('FLT-02 the client retries after Retry-After with the same code and verifier: the tokens the redemption stored, and no grant revoked', async () => {
    const s = await lostRedemption();
    s.h.clock.advance(STORAGE_RETRY_AFTER_SECONDS);
    s.failing.arm(-1);
    const retry = await s.h.exchange(s.client, s.code, s.pkce);
    expect(retry.status, retry.body).toBe(200);
    // Read the tombstone, check the grant is still active; then the bookkeeping the lost one skipped.
    expect(s.failing.calls()).toEqual(['codes.get', 'grants.get', 'clients.clearExpiry']);
    s.failing.disarm();
    const body = json(retry);
    // The one grant the code created, with the tokens it stored: nothing new was issued.
    const grants = await s.h.storage.grants.listByUser('ada', s.h.clock.now());
    expect(grants.filter((g) => g.clientId === s.client.client_id).map((g) => g.grantId)).toEqual([
      s.grantId,
    ]);
    const stored = await s.h.storage.grants.getAccessToken(
      await sha256(String(body.access_token)),
      s.h.clock.now(),
    );
    expect(stored?.grantId).toBe(s.grantId);
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(900 - STORAGE_RETRY_AFTER_SECONDS);
    expect(body.id_token).toEqual(expect.any(String));
    // Lost again: the next retry within the window gets the same response once more.
    s.h.clock.advance(1);
    const again = json(await s.h.exchange(s.client, s.code, s.pkce));
    expect([again.access_token, again.refresh_token, again.id_token]).toEqual([
      body.access_token,
      body.refresh_token,
      body.id_token,
    ]);
    await expectPersisted(s.h, s.client, retry);
    expect(revocations(s.h)).toEqual([]);
    expect(s.h.events.some((e) => e.type === 'code.replayed')).toBe(false);
  });

  it('FLT-02 TOK-13 storage holds the response only sealed: not a token in the clear, and it opens only with the code and its verifier', async () => {
    const s = await lostRedemption();
    s.h.clock.advance(STORAGE_RETRY_AFTER_SECONDS);
    const body = json(await s.h.exchange(s.client, s.code, s.pkce));
    const stored = await s.h.storage.codes.get(await sha256(s.code), s.h.clock.now());
    expect(stored?.sealedResponse).toEqual(expect.any(String));
    for (const token of [body.access_token, body.refresh_token, body.id_token]) {
      expect(JSON.stringify(stored)).not.toContain(String(token));
    }
    const { openTokenResponse } = await import('../../src/grants/token-response.js');
    const sealed = stored!.sealedResponse!;
    expect((await openTokenResponse(s.code, s.pkce.verifier, sealed))?.response.refresh_token).toBe(
      body.refresh_token,
    );
    expect(await openTokenResponse(s.code, pkce().verifier, sealed)).toBeUndefined();
    expect(await openTokenResponse(`${s.code}x`, s.pkce.verifier, sealed)).toBeUndefined();
  });

  it('TOK-13 ATK-02 a retry sooner than Retry-After is concurrent with the redemption: a replay, which revokes what the code issued', async () => {
    const s = await lostRedemption();
    s.h.clock.advance(STORAGE_RETRY_AFTER_SECONDS - 1);
    const early = await s.h.exchange(s.client, s.code, s.pkce);
    expect(early.status).toBe(400);
    expect(json(early).error).toBe('invalid_grant');
    expect(revocations(s.h)).toEqual([
      expect.objectContaining({ grantId: s.grantId, reason: 'code_replay' }),
    ]);
    // Revoked, the grant's tokens are dead: a later retry gets no response at all.
    s.h.clock.advance(1);
    expect(json(await s.h.exchange(s.client, s.code, s.pkce)).error).toBe('invalid_grant');
    expect((await s.h.storage.grants.get(s.grantId))?.revokedAt).toBeDefined();
  });

  it('TOK-13 a retry once codeGraceSeconds (10 s) have passed is a replay: it revokes what the code issued', async () => {
    const s = await lostRedemption();
    s.h.clock.advance(10);
    const late = await s.h.exchange(s.client, s.code, s.pkce);
    expect(json(late).error).toBe('invalid_grant');
    expect(revocations(s.h)).toEqual([
      expect.objectContaining({ grantId: s.grantId, reason: 'code_replay' }),
    ]);
    expect(s.h.events.some((e) => e.type === 'code.replayed')).toBe(true);
  });

  it('TOK-13 with codeGraceSeconds: 0 nothing is sealed, and the retry is a replay that revokes', async () => {
    const s = await lostRedemption({ tokens: { codeGraceSeconds: 0 } });
    expect(
      (await s.h.storage.codes.get(await sha256(s.code), s.h.clock.now()))?.sealedResponse,
    ).toBeUndefined();
    s.h.clock.advance(STORAGE_RETRY_AFTER_SECONDS);
    expect(json(await s.h.exchange(s.client, s.code, s.pkce)).error).toBe('invalid_grant');
    expect(revocations(s.h)).toHaveLength(1);
  });

  it('TOK-08 TOK-10 ATK-03 within the window, the code without its verifier, or from another client, gets nothing and revokes nothing; the client’s own retry still gets its tokens', async () => {
    const s = await lostRedemption();
    s.h.clock.advance(STORAGE_RETRY_AFTER_SECONDS);
    const wrongVerifier = await s.h.exchange(s.client, s.code, pkce());
    expect(json(wrongVerifier).error).toBe('invalid_grant');
    expect(json(wrongVerifier).access_token).toBeUndefined();
    const other = await s.h.register({ token_endpoint_auth_method: 'client_secret_post' });
    const otherClient = await s.h.exchange(other, s.code, s.pkce);
    expect(json(otherClient).error).toBe('invalid_grant');
    expect(revocations(s.h)).toEqual([]);
    await expectPersisted(s.h, s.client, await s.h.exchange(s.client, s.code, s.pkce));
    expect(revocations(s.h)).toEqual([]);
  });

  it('a retry after the grant was revoked (by its user, or a replay) gets invalid_grant, not the dead tokens', async () => {
    const s = await lostRedemption();
    await s.h.storage.grants.revoke(s.grantId, s.h.clock.now());
    s.h.clock.advance(STORAGE_RETRY_AFTER_SECONDS);
    const retry = await s.h.exchange(s.client, s.code, s.pkce);
    expect(json(retry).error).toBe('invalid_grant');
    expect(json(retry).access_token).toBeUndefined();
  });
});

describe('FLT-02 FLT-03 a storage failure at any step of the refresh_token grant', () => {
  /** A setup with a token response in hand, the client's expiry already cleared. */
  async function withTokens() {
    const s = await setUp();
    const { code, pkce } = await s.h.obtainCode(s.client);
    const body = json(await s.h.exchange(s.client, code, pkce));
    return { ...s, refreshToken: String(body.refresh_token) };
  }

  // The client's record was changed by the exchange (its expiry cleared), so it is read afresh.
  const steps = ['clients.get', 'grants.getRefreshToken', 'grants.rotateRefreshToken'];

  it('each step is one storage call: read the client, read the token, rotate it', async () => {
    const s = await withTokens();
    s.failing.arm(-1);
    expect((await s.h.refresh(s.client, s.refreshToken)).status).toBe(200);
    expect(s.failing.calls()).toEqual(steps);
  });

  for (const mode of ['before', 'after'] as const) {
    for (const [n, step] of steps.entries()) {
      it(`${step} failing ${mode} it takes effect: a 5xx, and the retry with the same refresh token succeeds, no grant revoked`, async () => {
        const s = await withTokens();
        s.failing.arm(n, mode);
        const first = await s.h.refresh(s.client, s.refreshToken);
        s.failing.disarm();
        expect(s.failing.calls()[n]).toBe(step);
        expectRetryableError(first);
        await expectPersisted(s.h, s.client, await s.h.refresh(s.client, s.refreshToken));
        expect(s.h.events.filter((e) => e.type === 'grant.revoked')).toEqual([]);
      });
    }
  }

  for (const mode of ['before', 'after'] as const) {
    for (const [n, step] of ['grants.getRefreshToken', 'grants.addAccessToken'].entries()) {
      it(`a retry within the grace window whose ${step} fails ${mode} it takes effect: a 5xx, then the same successor`, async () => {
        const s = await withTokens();
        const lost = json(await s.h.refresh(s.client, s.refreshToken));
        s.failing.arm(n, mode);
        const retry = await s.h.refresh(s.client, s.refreshToken);
        s.failing.disarm();
        expect(s.failing.calls()[n]).toBe(step);
        expectRetryableError(retry);
        const again = await s.h.refresh(s.client, s.refreshToken);
        expect(json(again).refresh_token).toBe(lost.refresh_token);
        await expectPersisted(s.h, s.client, again);
        expect(s.h.events.filter((e) => e.type === 'grant.revoked')).toEqual([]);
      });
    }
  }
});
