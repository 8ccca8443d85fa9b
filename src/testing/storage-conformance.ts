/**
 * The storage conformance kit: one suite every {@link Storage} adapter runs, ours and third
 * parties'. It takes the test runner's `describe`, `it` and `expect`, so it works with vitest,
 * jest, or `node:test` plus a small `expect`, and adds no dependency.
 * @module
 */
import { base64url } from '../core/crypto.js';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ClientRecord,
  GrantRecord,
  PendingAuthorizationRecord,
  RefreshTokenRecord,
  SigningKeyRecord,
  Storage,
} from '../storage/types.js';

/**
 * The matchers the kit uses; vitest's and jest's `expect` provide them.
 *
 * @example
 * ```ts
 * import { expect } from 'vitest';
 * import type { ConformanceMatchers } from 'portcullis/testing';
 *
 * const matchers: ConformanceMatchers = expect(42);
 * ```
 * @see docs/storage.md, "Writing and testing another adapter"
 * @group Conformance Kit
 */
export interface ConformanceMatchers {
  /** Same value (`Object.is`). */
  toBe(expected: unknown): void;
  /** Deep equality of plain data. */
  toEqual(expected: unknown): void;
  /** The value is `null`. */
  toBeNull(): void;
  /** The value is `undefined`. */
  toBeUndefined(): void;
  /** An array (or string) of this length. */
  toHaveLength(length: number): void;
  /** An array that contains `item`. */
  toContain(item: unknown): void;
  /** A number greater than `n`. */
  toBeGreaterThan(n: number): void;
}

/**
 * The test-runner functions the kit needs: vitest's or jest's `describe`, `it` and `expect` fit.
 *
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest';
 * import type { ConformanceRunner } from 'portcullis/testing';
 *
 * const runner: ConformanceRunner = { describe, it, expect };
 * ```
 * @see docs/storage.md, "Writing and testing another adapter"
 * @group Conformance Kit
 */
export interface ConformanceRunner {
  /** Declares a group of tests. */
  describe(name: string, body: () => void): void;
  /** Declares one test; `timeout` in milliseconds. */
  it(name: string, body: () => Promise<void>, timeout?: number): void;
  /** Starts an assertion about `actual`; `.not` negates it. */
  expect(actual: unknown): ConformanceMatchers & { not: ConformanceMatchers };
}

/**
 * How the kit obtains the adapter under test.
 *
 * @example
 * ```ts
 * import { pgliteStorage } from 'portcullis/pglite';
 * import type { StorageConformanceOptions } from 'portcullis/testing';
 *
 * const shared = pgliteStorage(); // one in-memory database for every test: the tests use random ids
 * const options: StorageConformanceOptions = { name: 'pglite', create: () => shared, concurrency: 20 };
 * ```
 * @see RFC 6749 §10.5 and RFC 9700 §4.14.2 (the atomic steps the kit checks under concurrency)
 * @group Conformance Kit
 */
export interface StorageConformanceOptions {
  /** Shown in test names. */
  name: string;
  /** Returns a ready storage. Called once per test; may return the same shared instance. */
  create(): Storage | Promise<Storage>;
  /** Called after each test with the storage `create` returned (close it, or leave it shared). */
  release?(storage: Storage): void | Promise<void>;
  /** Parallel callers in the concurrency tests (default 50). */
  concurrency?: number;
}

const NOW = 1_800_000_000;

function id(prefix: string): string {
  return `${prefix}-${base64url(crypto.getRandomValues(new Uint8Array(12)))}`;
}

function hash(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Fixture builders, exported for adapter authors writing extra tests. Each returns a valid record
 * with random ids; pass overrides for the fields a test is about.
 *
 * @example
 * ```ts
 * import { memoryStorage } from 'portcullis';
 * import { fixtures } from 'portcullis/testing';
 *
 * const storage = memoryStorage();
 * const client = fixtures.client({ metadata: { ...fixtures.client().metadata, client_name: 'Extra test' } });
 * await storage.createClient(client);
 * ```
 * @see docs/storage.md, "Writing and testing another adapter"
 * @group Conformance Kit
 */
export const fixtures = {
  /** A public, dynamically registered client with a loopback redirect URI. Every field can be overridden. */
  client(overrides: Partial<ClientRecord> = {}): ClientRecord {
    return {
      clientId: id('client'),
      metadata: {
        redirect_uris: ['http://127.0.0.1:49152/cb'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        application_type: 'native',
        client_name: 'Kit client',
      },
      origin: 'dynamic',
      createdAt: NOW,
      ...overrides,
    };
  },
  /** A pending authorization, unbound, expiring in 10 minutes. Every field can be overridden. */
  pending(overrides: Partial<PendingAuthorizationRecord> = {}): PendingAuthorizationRecord {
    return {
      idHash: hash(),
      request: {
        clientId: id('client'),
        redirectUri: 'http://127.0.0.1:49152/cb',
        redirectUriSent: true,
        state: 'xyz',
        scope: ['openid', 'courses:read'],
        resources: ['https://as.example/mcp'],
        codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        codeChallengeMethod: 'S256',
        prompt: [],
      },
      createdAt: NOW,
      expiresAt: NOW + 600,
      ...overrides,
    };
  },
  /** An unconsumed authorization code, expiring in 60 seconds. Every field can be overridden. */
  code(overrides: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord {
    return {
      codeHash: hash(),
      grantId: id('grant'),
      clientId: id('client'),
      userId: id('user'),
      redirectUri: 'http://127.0.0.1:49152/cb',
      redirectUriSent: true,
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      codeChallengeMethod: 'S256',
      scope: ['openid'],
      resources: ['https://as.example'],
      nonce: 'n-0S6_WzA2Mj',
      authTime: NOW - 10,
      createdAt: NOW,
      expiresAt: NOW + 60,
      ...overrides,
    };
  },
  /** An active grant, expiring in 90 days. Every field can be overridden. */
  grant(overrides: Partial<GrantRecord> = {}): GrantRecord {
    return {
      grantId: id('grant'),
      clientId: id('client'),
      userId: id('user'),
      scope: ['openid', 'courses:read'],
      resources: ['https://as.example'],
      authTime: NOW - 10,
      createdAt: NOW,
      expiresAt: NOW + 90 * 86400,
      ...overrides,
    };
  },
  /** An access token of `grant`, expiring in 15 minutes. Every field can be overridden. */
  accessToken(grant: GrantRecord, overrides: Partial<AccessTokenRecord> = {}): AccessTokenRecord {
    return {
      tokenHash: hash(),
      jti: id('jti'),
      grantId: grant.grantId,
      clientId: grant.clientId,
      userId: grant.userId,
      scope: grant.scope,
      audience: grant.resources,
      issuedAt: NOW,
      expiresAt: NOW + 900,
      ...overrides,
    };
  },
  /** A refresh token of `grant`, expiring in 30 days. Every field can be overridden. */
  refreshToken(grant: GrantRecord, overrides: Partial<RefreshTokenRecord> = {}): RefreshTokenRecord {
    return {
      tokenHash: hash(),
      grantId: grant.grantId,
      clientId: grant.clientId,
      userId: grant.userId,
      scope: grant.scope,
      resources: grant.resources,
      issuedAt: NOW,
      expiresAt: NOW + 30 * 86400,
      ...overrides,
    };
  },
  /** An active ES256 signing key (its JWK is a placeholder, not a usable key). Every field can be overridden. */
  signingKey(overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord {
    return {
      kid: id('kid'),
      alg: 'ES256',
      privateJwk: JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd' }),
      createdAt: NOW,
      activatesAt: NOW,
      ...overrides,
    };
  },
};

/**
 * Registers the conformance suite for one storage adapter: every method, null versus throw, expiry
 * at exactly `expiresAt`, and the atomic steps under concurrency (parallel consumers of one code,
 * one pending authorization, one refresh token, one grant id).
 *
 * @param runner - the test runner's `describe`, `it` and `expect`
 * @param options - how to create the storage under test
 * @see RFC 6749 §4.1.2 and §10.5 (single-use codes), RFC 9700 §4.14.2 (refresh token rotation)
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest';
 * import { memoryStorage } from 'portcullis';
 * import { runStorageConformance } from 'portcullis/testing';
 *
 * runStorageConformance({ describe, it, expect }, { name: 'memory', create: () => memoryStorage() });
 * ```
 * @group Conformance Kit
 */
export function runStorageConformance(runner: ConformanceRunner, options: StorageConformanceOptions): void {
  const { describe, it, expect } = runner;
  const parallel = options.concurrency ?? 50;

  async function withStorage(body: (storage: Storage) => Promise<void>): Promise<void> {
    const storage = await options.create();
    try {
      await body(storage);
    } finally {
      await options.release?.(storage);
    }
  }

  const test = (name: string, body: (storage: Storage) => Promise<void>) =>
    it(name, () => withStorage(body), 30_000);

  /** Stores a grant with one access and one refresh token. */
  async function seedGrant(storage: Storage, overrides: Partial<GrantRecord> = {}) {
    const grant = fixtures.grant(overrides);
    const accessToken = fixtures.accessToken(grant);
    const refreshToken = fixtures.refreshToken(grant);
    expect(await storage.createGrant({ grant, accessToken, refreshToken })).toBe(true);
    return { grant, accessToken, refreshToken };
  }

  describe(`storage conformance: ${options.name}`, () => {
    describe('clients', () => {
      test('creates, reads, updates and deletes a client', async (storage) => {
        const client = fixtures.client({ secretHash: hash() });
        await storage.createClient(client);
        expect(await storage.getClient(client.clientId, NOW)).toEqual(client);
        const updated = { ...client, metadata: { ...client.metadata, client_name: 'Renamed' } };
        expect(await storage.updateClient(updated)).toBe(true);
        expect((await storage.getClient(client.clientId, NOW))?.metadata.client_name).toBe('Renamed');
        expect(await storage.deleteClient(client.clientId, NOW)).toBe(true);
        expect(await storage.getClient(client.clientId, NOW)).toBeNull();
        expect(await storage.deleteClient(client.clientId, NOW)).toBe(false);
        expect(await storage.updateClient(client)).toBe(false);
      });

      test('refuses a duplicate client id', async (storage) => {
        const client = fixtures.client();
        await storage.createClient(client);
        let threw = false;
        try {
          await storage.createClient(client);
        } catch {
          threw = true;
        }
        expect(threw).toBe(true);
      });

      test('hides a client whose expiresAt has passed, and keeps one without expiry', async (storage) => {
        const expiring = fixtures.client({ expiresAt: NOW + 100 });
        const lasting = fixtures.client();
        await storage.createClient(expiring);
        await storage.createClient(lasting);
        expect(await storage.getClient(expiring.clientId, NOW + 99)).not.toBeNull();
        expect(await storage.getClient(expiring.clientId, NOW + 100)).toBeNull();
        expect(await storage.getClient(lasting.clientId, NOW + 10 ** 8)).not.toBeNull();
      });

      test('deleting a client revokes its grants and forgets its consents', async (storage) => {
        const client = fixtures.client();
        await storage.createClient(client);
        const { grant, accessToken } = await seedGrant(storage, { clientId: client.clientId });
        await storage.saveConsent({
          userId: grant.userId,
          clientId: client.clientId,
          scope: ['openid'],
          resources: [],
          createdAt: NOW,
          updatedAt: NOW,
        });
        await storage.deleteClient(client.clientId, NOW);
        expect(await storage.getAccessToken(accessToken.tokenHash, NOW)).toBeNull();
        expect(await storage.getConsent(grant.userId, client.clientId)).toBeNull();
      });
    });

    describe('pending authorizations', () => {
      test('stores, binds to one user, and never rebinds to another', async (storage) => {
        const pending = fixtures.pending();
        await storage.createPendingAuthorization(pending);
        expect(await storage.getPendingAuthorization(pending.idHash, NOW)).toEqual(pending);
        const csrfHash = hash();
        expect(
          await storage.bindPendingAuthorization(
            pending.idHash,
            { userId: 'u1', sessionId: 's1', csrfHash },
            NOW,
          ),
        ).toBe(true);
        const bound = await storage.getPendingAuthorization(pending.idHash, NOW);
        expect(bound?.userId).toBe('u1');
        expect(bound?.sessionId).toBe('s1');
        expect(bound?.csrfHash).toBe(csrfHash);
        expect(
          await storage.bindPendingAuthorization(pending.idHash, { userId: 'u2', csrfHash: hash() }, NOW),
        ).toBe(false);
        const again = hash();
        expect(
          await storage.bindPendingAuthorization(pending.idHash, { userId: 'u1', csrfHash: again }, NOW),
        ).toBe(true);
        expect((await storage.getPendingAuthorization(pending.idHash, NOW))?.csrfHash).toBe(again);
      });

      test('expires at expiresAt', async (storage) => {
        const pending = fixtures.pending({ expiresAt: NOW + 10 });
        await storage.createPendingAuthorization(pending);
        expect(await storage.getPendingAuthorization(pending.idHash, NOW + 9)).not.toBeNull();
        expect(await storage.getPendingAuthorization(pending.idHash, NOW + 10)).toBeNull();
        expect(
          await storage.bindPendingAuthorization(pending.idHash, { userId: 'u', csrfHash: hash() }, NOW + 10),
        ).toBe(false);
        expect(await storage.consumePendingAuthorization(pending.idHash, NOW + 10)).toBeNull();
      });

      test(`consume is atomic: ${parallel} parallel consumers, exactly one wins`, async (storage) => {
        const pending = fixtures.pending();
        await storage.createPendingAuthorization(pending);
        const results = await Promise.all(
          Array.from({ length: parallel }, () => storage.consumePendingAuthorization(pending.idHash, NOW)),
        );
        expect(results.filter((r) => r !== null)).toHaveLength(1);
        expect(await storage.getPendingAuthorization(pending.idHash, NOW)).toBeNull();
      });
    });

    describe('authorization codes', () => {
      test('stores a code with all its bindings and consumes it once, then reports replays', async (storage) => {
        const code = fixtures.code();
        await storage.createAuthorizationCode(code);
        expect(await storage.getAuthorizationCode(code.codeHash, NOW)).toEqual(code);
        const first = await storage.consumeAuthorizationCode(code.codeHash, NOW + 1);
        expect(first?.outcome).toBe('consumed');
        expect(first?.code.grantId).toBe(code.grantId);
        expect(first?.code.consumedAt).toBe(NOW + 1);
        const second = await storage.consumeAuthorizationCode(code.codeHash, NOW + 2);
        expect(second?.outcome).toBe('replayed');
        expect(second?.code.grantId).toBe(code.grantId);
        expect((await storage.getAuthorizationCode(code.codeHash, NOW + 2))?.consumedAt).toBe(NOW + 1);
      });

      test('an expired or unknown code is null', async (storage) => {
        const code = fixtures.code({ expiresAt: NOW + 60 });
        await storage.createAuthorizationCode(code);
        expect(await storage.getAuthorizationCode(code.codeHash, NOW + 60)).toBeNull();
        expect(await storage.consumeAuthorizationCode(code.codeHash, NOW + 60)).toBeNull();
        expect(await storage.consumeAuthorizationCode(hash(), NOW)).toBeNull();
      });

      test('a consumed code stays until it expires, through cleanup, so a late replay is still seen', async (storage) => {
        const code = fixtures.code({ expiresAt: NOW + 60 });
        await storage.createAuthorizationCode(code);
        expect((await storage.consumeAuthorizationCode(code.codeHash, NOW))?.outcome).toBe('consumed');
        await storage.deleteExpired(NOW + 59);
        const replay = await storage.consumeAuthorizationCode(code.codeHash, NOW + 59);
        expect(replay?.outcome).toBe('replayed');
        expect(replay?.code.grantId).toBe(code.grantId);
      });

      test(`consume is atomic: ${parallel} parallel consumers, exactly one wins`, async (storage) => {
        const code = fixtures.code();
        await storage.createAuthorizationCode(code);
        const results = await Promise.all(
          Array.from({ length: parallel }, () => storage.consumeAuthorizationCode(code.codeHash, NOW)),
        );
        expect(results.filter((r) => r?.outcome === 'consumed')).toHaveLength(1);
        expect(results.filter((r) => r?.outcome === 'replayed')).toHaveLength(parallel - 1);
      });
    });

    describe('grants and access tokens', () => {
      test('creates a grant with its tokens and reads them back', async (storage) => {
        const { grant, accessToken, refreshToken } = await seedGrant(storage);
        expect(await storage.getGrant(grant.grantId)).toEqual(grant);
        expect(await storage.getAccessToken(accessToken.tokenHash, NOW)).toEqual(accessToken);
        expect(await storage.getRefreshToken(refreshToken.tokenHash, NOW)).toEqual(refreshToken);
        const listed = await storage.listGrantsByUser(grant.userId, NOW);
        expect(listed.map((g) => g.grantId)).toEqual([grant.grantId]);
      });

      test('refuses a second grant with the same id, writing nothing', async (storage) => {
        const { grant } = await seedGrant(storage);
        const other = fixtures.accessToken(grant);
        expect(await storage.createGrant({ grant, accessToken: other })).toBe(false);
        expect(await storage.getAccessToken(other.tokenHash, NOW)).toBeNull();
      });

      test(`createGrant is atomic: ${parallel} parallel creations of one grant id, exactly one writes`, async (storage) => {
        const grant = fixtures.grant();
        const issuances = Array.from({ length: parallel }, () => ({
          grant,
          accessToken: fixtures.accessToken(grant),
          refreshToken: fixtures.refreshToken(grant),
        }));
        const results = await Promise.all(issuances.map((issuance) => storage.createGrant(issuance)));
        expect(results.filter((created) => created)).toHaveLength(1);
        // Only the winner's tokens exist: the losers wrote nothing.
        for (const [i, issuance] of issuances.entries()) {
          const stored = await storage.getAccessToken(issuance.accessToken.tokenHash, NOW);
          expect(stored !== null).toBe(results[i]);
          const refresh = await storage.getRefreshToken(issuance.refreshToken.tokenHash, NOW);
          expect(refresh !== null).toBe(results[i]);
        }
      });

      test('an access token expires at expiresAt and can be revoked alone', async (storage) => {
        const { grant, accessToken } = await seedGrant(storage);
        expect(await storage.getAccessToken(accessToken.tokenHash, accessToken.expiresAt - 1)).not.toBeNull();
        expect(await storage.getAccessToken(accessToken.tokenHash, accessToken.expiresAt)).toBeNull();
        const second = fixtures.accessToken(grant);
        await storage.createAccessToken(second);
        expect(await storage.revokeAccessToken(second.tokenHash, NOW)).toBe(true);
        expect(await storage.revokeAccessToken(second.tokenHash, NOW)).toBe(false);
        expect(await storage.getAccessToken(second.tokenHash, NOW)).toBeNull();
        expect(await storage.getAccessToken(accessToken.tokenHash, NOW)).not.toBeNull();
        expect(await storage.revokeAccessToken(hash(), NOW)).toBe(false);
      });

      test('revoking a grant revokes every token it issued', async (storage) => {
        const { grant, accessToken, refreshToken } = await seedGrant(storage);
        const extra = fixtures.accessToken(grant);
        await storage.createAccessToken(extra);
        expect(await storage.revokeGrant(grant.grantId, NOW + 5)).toBe(true);
        expect(await storage.revokeGrant(grant.grantId, NOW + 6)).toBe(false);
        expect(await storage.getAccessToken(accessToken.tokenHash, NOW + 5)).toBeNull();
        expect(await storage.getAccessToken(extra.tokenHash, NOW + 5)).toBeNull();
        expect(await storage.getRefreshToken(refreshToken.tokenHash, NOW + 5)).toBeNull();
        expect((await storage.getGrant(grant.grantId))?.revokedAt).toBe(NOW + 5);
        expect(await storage.listGrantsByUser(grant.userId, NOW + 5)).toHaveLength(0);
        const next = fixtures.refreshToken(grant);
        const rotated = await storage.rotateRefreshToken(
          refreshToken.tokenHash,
          { refreshToken: next, accessToken: fixtures.accessToken(grant) },
          NOW + 5,
          0,
        );
        expect(rotated.outcome).toBe('invalid');
      });

      test('revoking a grant id that does not exist yet blocks its later creation (code replay race)', async (storage) => {
        const grant = fixtures.grant();
        expect(await storage.revokeGrant(grant.grantId, NOW)).toBe(false);
        // The placeholder only blocks the id: it is not a grant.
        expect(await storage.getGrant(grant.grantId)).toBeNull();
        expect(await storage.revokeGrant(grant.grantId, NOW)).toBe(false);
        const accessToken = fixtures.accessToken(grant);
        expect(await storage.createGrant({ grant, accessToken })).toBe(false);
        expect(await storage.getAccessToken(accessToken.tokenHash, NOW)).toBeNull();
        expect(await storage.getGrant(grant.grantId)).toBeNull();
      });

      test('lists only active grants of the user, newest first', async (storage) => {
        const userId = id('user');
        const old = await seedGrant(storage, { userId, createdAt: NOW - 100 });
        const recent = await seedGrant(storage, { userId, createdAt: NOW - 10 });
        const revoked = await seedGrant(storage, { userId, createdAt: NOW - 5 });
        await seedGrant(storage, { userId, createdAt: NOW - 200, expiresAt: NOW - 1 });
        await seedGrant(storage);
        await storage.revokeGrant(revoked.grant.grantId, NOW);
        const listed = await storage.listGrantsByUser(userId, NOW);
        expect(listed.map((g) => g.grantId)).toEqual([recent.grant.grantId, old.grant.grantId]);
      });
    });

    describe('refresh tokens', () => {
      test('rotation marks the old token, stores the successor and its access token', async (storage) => {
        const { grant, refreshToken } = await seedGrant(storage);
        const next = fixtures.refreshToken(grant, { issuedAt: NOW + 1 });
        const accessToken = fixtures.accessToken(grant, { issuedAt: NOW + 1 });
        const result = await storage.rotateRefreshToken(
          refreshToken.tokenHash,
          { refreshToken: next, accessToken, sealedSuccessor: 'sealed' },
          NOW + 1,
          0,
        );
        expect(result.outcome).toBe('rotated');
        const old = await storage.getRefreshToken(refreshToken.tokenHash, NOW + 1);
        expect(old?.rotatedAt).toBe(NOW + 1);
        expect(old?.successorHash).toBe(next.tokenHash);
        expect(old?.sealedSuccessor).toBe('sealed');
        expect(await storage.getRefreshToken(next.tokenHash, NOW + 1)).toEqual(next);
        expect(await storage.getAccessToken(accessToken.tokenHash, NOW + 1)).toEqual(accessToken);
      });

      test('presenting a rotated-out token revokes the whole grant (reuse detection)', async (storage) => {
        const { grant, refreshToken, accessToken } = await seedGrant(storage);
        const r2 = fixtures.refreshToken(grant);
        const a2 = fixtures.accessToken(grant);
        await storage.rotateRefreshToken(
          refreshToken.tokenHash,
          { refreshToken: r2, accessToken: a2 },
          NOW,
          0,
        );
        const replay = await storage.rotateRefreshToken(
          refreshToken.tokenHash,
          { refreshToken: fixtures.refreshToken(grant), accessToken: fixtures.accessToken(grant) },
          NOW + 1,
          0,
        );
        expect(replay).toEqual({ outcome: 'reused', grantId: grant.grantId });
        expect(await storage.getRefreshToken(r2.tokenHash, NOW + 1)).toBeNull();
        expect(await storage.getAccessToken(a2.tokenHash, NOW + 1)).toBeNull();
        expect(await storage.getAccessToken(accessToken.tokenHash, NOW + 1)).toBeNull();
        expect((await storage.getGrant(grant.grantId))?.revokedAt).toBe(NOW + 1);
      });

      test('within the grace period a rotated token reports grace and writes nothing', async (storage) => {
        const { grant, refreshToken } = await seedGrant(storage);
        const r2 = fixtures.refreshToken(grant);
        await storage.rotateRefreshToken(
          refreshToken.tokenHash,
          { refreshToken: r2, accessToken: fixtures.accessToken(grant), sealedSuccessor: 'sealed-r2' },
          NOW,
          5,
        );
        const unused = fixtures.refreshToken(grant);
        const retry = await storage.rotateRefreshToken(
          refreshToken.tokenHash,
          { refreshToken: unused, accessToken: fixtures.accessToken(grant) },
          NOW + 4,
          5,
        );
        expect(retry.outcome).toBe('grace');
        if (retry.outcome === 'grace') expect(retry.previous.sealedSuccessor).toBe('sealed-r2');
        expect(await storage.getRefreshToken(unused.tokenHash, NOW + 4)).toBeNull();
        expect(await storage.getRefreshToken(r2.tokenHash, NOW + 4)).not.toBeNull();
        const late = await storage.rotateRefreshToken(
          refreshToken.tokenHash,
          { refreshToken: fixtures.refreshToken(grant), accessToken: fixtures.accessToken(grant) },
          NOW + 5,
          5,
        );
        expect(late.outcome).toBe('reused');
      });

      test(`rotation is atomic: ${parallel} parallel rotations of one token, exactly one succeeds`, async (storage) => {
        const { grant, refreshToken } = await seedGrant(storage);
        const successors = Array.from({ length: parallel }, () => fixtures.refreshToken(grant));
        const results = await Promise.all(
          successors.map((next) =>
            storage.rotateRefreshToken(
              refreshToken.tokenHash,
              { refreshToken: next, accessToken: fixtures.accessToken(grant) },
              NOW,
              0,
            ),
          ),
        );
        expect(results.filter((r) => r.outcome === 'rotated')).toHaveLength(1);
        expect(
          results.filter((r) => r.outcome === 'rotated' || r.outcome === 'reused' || r.outcome === 'invalid'),
        ).toHaveLength(parallel);
        // The losers were reuse: the grant, and with it the winner's successor, is revoked.
        expect(results.some((r) => r.outcome === 'reused')).toBe(true);
        for (const next of successors) expect(await storage.getRefreshToken(next.tokenHash, NOW)).toBeNull();
      });

      test(`within the grace period ${parallel} parallel retries of one token: one rotates, the rest get its successor`, async (storage) => {
        const { grant, refreshToken } = await seedGrant(storage);
        const successors = Array.from({ length: parallel }, () => fixtures.refreshToken(grant));
        const results = await Promise.all(
          successors.map((next) =>
            storage.rotateRefreshToken(
              refreshToken.tokenHash,
              {
                refreshToken: next,
                accessToken: fixtures.accessToken(grant),
                sealedSuccessor: next.tokenHash,
              },
              NOW,
              5,
            ),
          ),
        );
        expect(results.filter((r) => r.outcome === 'rotated')).toHaveLength(1);
        expect(results.filter((r) => r.outcome === 'grace')).toHaveLength(parallel - 1);
        const winner = (await storage.getRefreshToken(refreshToken.tokenHash, NOW))?.successorHash;
        for (const result of results) {
          if (result.outcome === 'grace') expect(result.previous.sealedSuccessor).toBe(winner);
        }
        // Retries are not reuse: the grant and the one successor stay valid.
        expect((await storage.getGrant(grant.grantId))?.revokedAt).toBeUndefined();
        for (const next of successors) {
          expect((await storage.getRefreshToken(next.tokenHash, NOW)) !== null).toBe(
            next.tokenHash === winner,
          );
        }
      });

      test('an expired, revoked, or unknown refresh token does not rotate', async (storage) => {
        const { grant, refreshToken } = await seedGrant(storage);
        const next = () => ({
          refreshToken: fixtures.refreshToken(grant),
          accessToken: fixtures.accessToken(grant),
        });
        expect(
          (await storage.rotateRefreshToken(refreshToken.tokenHash, next(), refreshToken.expiresAt, 0))
            .outcome,
        ).toBe('invalid');
        expect(await storage.getRefreshToken(refreshToken.tokenHash, refreshToken.expiresAt)).toBeNull();
        expect((await storage.rotateRefreshToken(hash(), next(), NOW, 0)).outcome).toBe('invalid');
        const expiredGrant = await seedGrant(storage, { expiresAt: NOW + 10 });
        expect(
          (
            await storage.rotateRefreshToken(
              expiredGrant.refreshToken.tokenHash,
              {
                refreshToken: fixtures.refreshToken(expiredGrant.grant),
                accessToken: fixtures.accessToken(expiredGrant.grant),
              },
              NOW + 10,
              0,
            )
          ).outcome,
        ).toBe('invalid');
        // The token itself lives on, but its grant has reached its absolute expiry.
        expect(await storage.getRefreshToken(expiredGrant.refreshToken.tokenHash, NOW + 9)).not.toBeNull();
        expect(await storage.getRefreshToken(expiredGrant.refreshToken.tokenHash, NOW + 10)).toBeNull();
      });
    });

    describe('consents', () => {
      test('saves, replaces and forgets a consent', async (storage) => {
        const userId = id('user');
        const clientId = id('client');
        const consent = {
          userId,
          clientId,
          scope: ['openid'],
          resources: ['https://as.example'],
          createdAt: NOW,
          updatedAt: NOW,
        };
        expect(await storage.getConsent(userId, clientId)).toBeNull();
        await storage.saveConsent(consent);
        expect(await storage.getConsent(userId, clientId)).toEqual(consent);
        const wider = { ...consent, scope: ['openid', 'email'], updatedAt: NOW + 1 };
        await storage.saveConsent(wider);
        expect(await storage.getConsent(userId, clientId)).toEqual(wider);
        expect(await storage.getConsent(userId, id('client'))).toBeNull();
        expect(await storage.deleteConsent(userId, clientId)).toBe(true);
        expect(await storage.deleteConsent(userId, clientId)).toBe(false);
        expect(await storage.getConsent(userId, clientId)).toBeNull();
      });
    });

    describe('signing keys', () => {
      test('adds, lists in creation order, and updates keys; refuses a duplicate kid', async (storage) => {
        const first = fixtures.signingKey({ createdAt: NOW - 10 });
        const second = fixtures.signingKey({ alg: 'RS256', createdAt: NOW });
        await storage.addSigningKey(first);
        await storage.addSigningKey(second);
        const listed = (await storage.listSigningKeys()).filter(
          (k) => k.kid === first.kid || k.kid === second.kid,
        );
        expect(listed).toEqual([first, second]);
        const retired = { ...first, retiresAt: NOW, expiresAt: NOW + 3600 };
        expect(await storage.updateSigningKey(retired)).toBe(true);
        expect((await storage.listSigningKeys()).find((k) => k.kid === first.kid)).toEqual(retired);
        expect(await storage.updateSigningKey(fixtures.signingKey())).toBe(false);
        let threw = false;
        try {
          await storage.addSigningKey(first);
        } catch {
          threw = true;
        }
        expect(threw).toBe(true);
      });
    });

    describe('expiry', () => {
      test('deleteExpired removes what has expired and keeps the rest', async (storage) => {
        const later = NOW + 10 ** 7;
        const pending = fixtures.pending({ expiresAt: NOW + 5 });
        await storage.createPendingAuthorization(pending);
        const unusedClient = fixtures.client({ expiresAt: NOW + 5 });
        const lastingClient = fixtures.client();
        await storage.createClient(unusedClient);
        await storage.createClient(lastingClient);
        const stale = await seedGrant(storage, { expiresAt: NOW + 100 });
        const key = fixtures.signingKey({ expiresAt: NOW + 50 });
        await storage.addSigningKey(key);
        const keep = await seedGrant(storage, { expiresAt: later + 10 ** 6 });
        const keepToken = fixtures.refreshToken(keep.grant, { expiresAt: later + 100 });
        await storage.rotateRefreshToken(
          keep.refreshToken.tokenHash,
          { refreshToken: keepToken, accessToken: fixtures.accessToken(keep.grant) },
          NOW,
          0,
        );
        const removed = await storage.deleteExpired(later);
        expect(removed).toBeGreaterThan(0);
        expect(await storage.getPendingAuthorization(pending.idHash, NOW)).toBeNull();
        // updateClient ignores expiry: false means the record is gone, not merely hidden.
        expect(await storage.updateClient(unusedClient)).toBe(false);
        expect(await storage.updateClient(lastingClient)).toBe(true);
        expect(await storage.getGrant(stale.grant.grantId)).toBeNull();
        expect((await storage.listSigningKeys()).some((k) => k.kid === key.kid)).toBe(false);
        expect(await storage.getGrant(keep.grant.grantId)).not.toBeNull();
        expect(await storage.getRefreshToken(keepToken.tokenHash, later)).not.toBeNull();
      });
    });
  });
}
