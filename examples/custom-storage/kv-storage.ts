/**
 * A third-party storage adapter: {@link Storage} over a key-value store that keeps JSON strings,
 * as Deno KV, FoundationDB, etcd or DynamoDB do. It shows the one thing an adapter must get right:
 * the ATOMIC steps of the contract (consuming a pending authorization or a code, creating and
 * revoking a grant, rotating a refresh token) are each one conditional commit, retried when another
 * writer got there first. It passes `runStorageConformance` (see test/examples/custom-storage.test.ts).
 *
 * Data layout (every value is a JSON string):
 * - `client/<id>`, `pending/<hash>`, `code/<hash>`, `access/<hash>`, `refresh/<hash>`, `key/<kid>`
 * - `grant/<id>`: `{ record, revokedAt }`; `record` is null for the revoked placeholder that
 *   `revokeGrant` leaves for an id not created yet. Tokens are not rewritten on revocation: reading
 *   a token checks its grant, so revoking a grant is a single write.
 * - `consent/<user>/<client>` and the index `user-grant/<user>/<grantId>` (parts URI-encoded).
 *
 * Scans (`deleteClient`, `deleteExpired`) walk a prefix; a production adapter would keep indexes
 * or use the store's own expiry.
 */
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ClientRecord,
  ConsentRecord,
  ConsumeCodeResult,
  GrantRecord,
  PendingAuthorizationRecord,
  RefreshTokenRecord,
  RotateResult,
  SigningKeyRecord,
  Storage,
} from 'portcullis';

// #region kv-interface
/** A value and the version it was written at; any write to the key changes the version. */
export interface Versioned {
  readonly value: string;
  readonly version: number;
}

/** The key-value store the adapter needs: reads, prefix listing, and an atomic conditional commit. */
export interface KeyValueStore {
  /** The value of `key`, or `null` when absent. */
  get(key: string): Promise<Versioned | null>;
  /** Keys starting with `prefix`, in insertion order. */
  list(prefix: string): Promise<string[]>;
  /**
   * Applies every write (a `null` value deletes) if and only if every check still holds: the key
   * is at `version`, or absent for `version: null`. All or nothing; returns whether it committed.
   */
  commit(
    checks: readonly { readonly key: string; readonly version: number | null }[],
    writes: readonly { readonly key: string; readonly value: string | null }[],
  ): Promise<boolean>;
}
// #endregion kv-interface

/** An in-memory {@link KeyValueStore}: a `Map` of JSON strings with a version counter. */
export function mapKeyValueStore(): KeyValueStore {
  const map = new Map<string, Versioned>();
  let clock = 0;
  return {
    async get(key) {
      return map.get(key) ?? null;
    },
    async list(prefix) {
      return [...map.keys()].filter((key) => key.startsWith(prefix));
    },
    async commit(checks, writes) {
      // No await between the checks and the writes: the commit is atomic in one process.
      for (const { key, version } of checks) {
        if ((map.get(key)?.version ?? null) !== version) return false;
      }
      clock++;
      for (const { key, value } of writes) {
        if (value === null) map.delete(key);
        else map.set(key, { value, version: clock });
      }
      return true;
    },
  };
}

/** The value stored under `grant/<id>`. */
interface GrantEntry {
  readonly record: GrantRecord | null;
  readonly revokedAt?: number;
}

const part = encodeURIComponent;
const keys = {
  client: (id: string) => `client/${part(id)}`,
  pending: (hash: string) => `pending/${hash}`,
  code: (hash: string) => `code/${hash}`,
  grant: (id: string) => `grant/${part(id)}`,
  access: (hash: string) => `access/${hash}`,
  refresh: (hash: string) => `refresh/${hash}`,
  consent: (userId: string, clientId: string) => `consent/${part(userId)}/${part(clientId)}`,
  userGrant: (userId: string, grantId: string) => `user-grant/${part(userId)}/${part(grantId)}`,
  signingKey: (kid: string) => `key/${part(kid)}`,
};

/** Consumed codes stay this long past their expiry, so late replays are still recognised. */
const CODE_TOMBSTONE_SECONDS = 600;

/**
 * Creates a {@link Storage} over `kv`.
 *
 * @param kv - the key-value store
 * @returns a storage that passes the conformance kit
 */
export function kvStorage(kv: KeyValueStore): Storage {
  async function read<T>(key: string): Promise<{ record: T; version: number } | null> {
    const found = await kv.get(key);
    return found === null ? null : { record: JSON.parse(found.value) as T, version: found.version };
  }
  const put = (key: string, value: unknown) => ({ key, value: JSON.stringify(value) });
  const remove = (key: string) => ({ key, value: null });
  const at = (key: string, version: number | null) => ({ key, version });

  /** Writes `value` unless the key exists. */
  async function insert(key: string, value: unknown): Promise<boolean> {
    return kv.commit([at(key, null)], [put(key, value)]);
  }

  /**
   * The read-check-write loop every atomic step uses: `step` reads, decides, and returns the checks
   * and writes of its commit (or a result without writing); when the commit loses a race, the step
   * runs again on fresh data.
   */
  async function atomically<R>(
    step: () => Promise<
      | { readonly done: R }
      | {
          readonly checks: Parameters<KeyValueStore['commit']>[0];
          readonly writes: Parameters<KeyValueStore['commit']>[1];
          readonly result: R;
        }
    >,
  ): Promise<R> {
    for (;;) {
      const plan = await step();
      if ('done' in plan) return plan.done;
      if (await kv.commit(plan.checks, plan.writes)) return plan.result;
    }
  }

  async function grantEntry(grantId: string) {
    return read<GrantEntry>(keys.grant(grantId));
  }

  function grantActive(entry: GrantEntry | undefined, now: number): boolean {
    return (
      entry?.record !== undefined &&
      entry.record !== null &&
      entry.revokedAt === undefined &&
      entry.record.expiresAt > now
    );
  }

  function revoked(entry: GrantEntry | null, now: number): GrantEntry {
    return entry?.record
      ? { record: { ...entry.record, revokedAt: now }, revokedAt: now }
      : { record: null, revokedAt: now };
  }

  return {
    async createClient(client) {
      if (!(await insert(keys.client(client.clientId), client))) {
        throw new Error(`client ${client.clientId} already exists`);
      }
    },
    async getClient(clientId, now) {
      const client = (await read<ClientRecord>(keys.client(clientId)))?.record;
      if (client === undefined || (client.expiresAt !== undefined && client.expiresAt <= now)) return null;
      return client;
    },
    async updateClient(client) {
      return atomically(async () => {
        const current = await kv.get(keys.client(client.clientId));
        if (current === null) return { done: false };
        return {
          checks: [at(keys.client(client.clientId), current.version)],
          writes: [put(keys.client(client.clientId), client)],
          result: true,
        };
      });
    },
    async deleteClient(clientId, now) {
      const current = await kv.get(keys.client(clientId));
      if (
        current === null ||
        !(await kv.commit([at(keys.client(clientId), current.version)], [remove(keys.client(clientId))]))
      ) {
        return false;
      }
      for (const key of await kv.list('consent/')) {
        const consent = await read<ConsentRecord>(key);
        if (consent?.record.clientId === clientId) await kv.commit([at(key, consent.version)], [remove(key)]);
      }
      for (const key of await kv.list('grant/')) {
        await atomically(async () => {
          const entry = await read<GrantEntry>(key);
          if (
            entry === null ||
            entry.record.record?.clientId !== clientId ||
            entry.record.revokedAt !== undefined
          ) {
            return { done: undefined };
          }
          return {
            checks: [at(key, entry.version)],
            writes: [put(key, revoked(entry.record, now))],
            result: undefined,
          };
        });
      }
      return true;
    },

    async createPendingAuthorization(pending) {
      await kv.commit([], [put(keys.pending(pending.idHash), pending)]);
    },
    async getPendingAuthorization(idHash, now) {
      const pending = (await read<PendingAuthorizationRecord>(keys.pending(idHash)))?.record;
      return pending === undefined || pending.expiresAt <= now ? null : pending;
    },
    async bindPendingAuthorization(idHash, binding, now) {
      return atomically(async () => {
        const found = await read<PendingAuthorizationRecord>(keys.pending(idHash));
        if (found === null || found.record.expiresAt <= now) return { done: false };
        const pending = found.record;
        if (pending.userId !== undefined && pending.userId !== binding.userId) return { done: false };
        const bound: PendingAuthorizationRecord = {
          ...pending,
          userId: binding.userId,
          csrfHash: binding.csrfHash,
          ...(binding.sessionId === undefined ? {} : { sessionId: binding.sessionId }),
        };
        return {
          checks: [at(keys.pending(idHash), found.version)],
          writes: [put(keys.pending(idHash), bound)],
          result: true,
        };
      });
    },
    // #region consume-pending
    async consumePendingAuthorization(idHash, now) {
      // ATOMIC: delete the record only if nobody changed it since we read it. Of concurrent
      // callers, one commit succeeds; the others retry, find nothing, and get null.
      return atomically(async () => {
        const found = await read<PendingAuthorizationRecord>(keys.pending(idHash));
        if (found === null) return { done: null };
        return {
          checks: [at(keys.pending(idHash), found.version)],
          writes: [remove(keys.pending(idHash))],
          result: found.record.expiresAt <= now ? null : found.record,
        };
      });
    },
    // #endregion consume-pending

    async createAuthorizationCode(code) {
      await kv.commit([], [put(keys.code(code.codeHash), code)]);
    },
    async getAuthorizationCode(codeHash, now) {
      const code = (await read<AuthorizationCodeRecord>(keys.code(codeHash)))?.record;
      return code === undefined || code.expiresAt <= now ? null : code;
    },
    async consumeAuthorizationCode(codeHash, now) {
      return atomically<ConsumeCodeResult | null>(async () => {
        const found = await read<AuthorizationCodeRecord>(keys.code(codeHash));
        if (found === null || found.record.expiresAt <= now) return { done: null };
        if (found.record.consumedAt !== undefined) {
          return { done: { outcome: 'replayed', code: found.record } };
        }
        const consumed = { ...found.record, consumedAt: now };
        return {
          checks: [at(keys.code(codeHash), found.version)],
          writes: [put(keys.code(codeHash), consumed)],
          result: { outcome: 'consumed', code: consumed },
        };
      });
    },

    async createGrant({ grant, accessToken, refreshToken }) {
      // ATOMIC: the grant key must not exist (not even as a revoked placeholder); the grant, its
      // tokens and the user index are written in the same commit.
      const entry: GrantEntry = {
        record: grant,
        ...(grant.revokedAt === undefined ? {} : { revokedAt: grant.revokedAt }),
      };
      return kv.commit(
        [at(keys.grant(grant.grantId), null)],
        [
          put(keys.grant(grant.grantId), entry),
          put(keys.userGrant(grant.userId, grant.grantId), grant.grantId),
          put(keys.access(accessToken.tokenHash), accessToken),
          ...(refreshToken === undefined ? [] : [put(keys.refresh(refreshToken.tokenHash), refreshToken)]),
        ],
      );
    },
    async getGrant(grantId) {
      return (await grantEntry(grantId))?.record.record ?? null;
    },
    async listGrantsByUser(userId, now) {
      const grants: GrantRecord[] = [];
      for (const key of await kv.list(`user-grant/${part(userId)}/`)) {
        const grantId = (await read<string>(key))?.record;
        const entry = grantId === undefined ? null : await grantEntry(grantId);
        if (entry !== null && grantActive(entry.record, now)) grants.push(entry.record.record!);
      }
      return grants.sort((a, b) => b.createdAt - a.createdAt || (a.grantId < b.grantId ? -1 : 1));
    },
    async revokeGrant(grantId, now) {
      // ATOMIC enough for the contract: one conditional write marks the grant (or a placeholder).
      return atomically(async () => {
        const found = await grantEntry(grantId);
        if (found?.record.revokedAt !== undefined) return { done: false };
        return {
          checks: [at(keys.grant(grantId), found?.version ?? null)],
          writes: [put(keys.grant(grantId), revoked(found?.record ?? null, now))],
          result: found !== null && found.record.record !== null,
        };
      });
    },

    async createAccessToken(token) {
      await kv.commit([], [put(keys.access(token.tokenHash), token)]);
    },
    async getAccessToken(tokenHash, now) {
      const token = (await read<AccessTokenRecord>(keys.access(tokenHash)))?.record;
      if (token === undefined || token.revokedAt !== undefined || token.expiresAt <= now) return null;
      const grant = await grantEntry(token.grantId);
      return grant === null || grant.record.revokedAt !== undefined ? null : token;
    },
    async revokeAccessToken(tokenHash, now) {
      return atomically(async () => {
        const found = await read<AccessTokenRecord>(keys.access(tokenHash));
        if (found === null || found.record.revokedAt !== undefined) return { done: false };
        return {
          checks: [at(keys.access(tokenHash), found.version)],
          writes: [put(keys.access(tokenHash), { ...found.record, revokedAt: now })],
          result: true,
        };
      });
    },

    async getRefreshToken(tokenHash, now) {
      const token = (await read<RefreshTokenRecord>(keys.refresh(tokenHash)))?.record;
      if (token === undefined || token.revokedAt !== undefined || token.expiresAt <= now) return null;
      return grantActive((await grantEntry(token.grantId))?.record, now) ? token : null;
    },
    // #region rotate-refresh
    async rotateRefreshToken(oldHash, next, now, graceSeconds) {
      // ATOMIC: the commit is conditional on both the old token and its grant being unchanged, so
      // of concurrent rotations one wins; the others retry and see a rotated token (reuse).
      return atomically<RotateResult>(async () => {
        const old = await read<RefreshTokenRecord>(keys.refresh(oldHash));
        if (old === null || old.record.revokedAt !== undefined || old.record.expiresAt <= now) {
          return { done: { outcome: 'invalid' } };
        }
        const grant = await grantEntry(old.record.grantId);
        if (grant === null || !grantActive(grant.record, now)) return { done: { outcome: 'invalid' } };
        const grantKey = keys.grant(old.record.grantId);
        if (old.record.rotatedAt !== undefined) {
          if (graceSeconds > 0 && now - old.record.rotatedAt < graceSeconds) {
            return { done: { outcome: 'grace', previous: old.record } };
          }
          return {
            checks: [at(grantKey, grant.version)],
            writes: [put(grantKey, revoked(grant.record, now))],
            result: { outcome: 'reused', grantId: old.record.grantId },
          };
        }
        const rotated: RefreshTokenRecord = {
          ...old.record,
          rotatedAt: now,
          successorHash: next.refreshToken.tokenHash,
          ...(next.sealedSuccessor === undefined ? {} : { sealedSuccessor: next.sealedSuccessor }),
        };
        return {
          checks: [at(keys.refresh(oldHash), old.version), at(grantKey, grant.version)],
          writes: [
            put(keys.refresh(oldHash), rotated),
            put(keys.refresh(next.refreshToken.tokenHash), next.refreshToken),
            put(keys.access(next.accessToken.tokenHash), next.accessToken),
          ],
          result: { outcome: 'rotated' },
        };
      });
    },
    // #endregion rotate-refresh

    async getConsent(userId, clientId) {
      return (await read<ConsentRecord>(keys.consent(userId, clientId)))?.record ?? null;
    },
    async saveConsent(consent) {
      await kv.commit([], [put(keys.consent(consent.userId, consent.clientId), consent)]);
    },
    async deleteConsent(userId, clientId) {
      const current = await kv.get(keys.consent(userId, clientId));
      if (current === null) return false;
      return kv.commit(
        [at(keys.consent(userId, clientId), current.version)],
        [remove(keys.consent(userId, clientId))],
      );
    },

    async listSigningKeys() {
      const found: SigningKeyRecord[] = [];
      for (const key of await kv.list('key/')) {
        const record = (await read<SigningKeyRecord>(key))?.record;
        if (record !== undefined) found.push(record);
      }
      // `list` returns insertion order here; a store that lists by key order needs this sort.
      return found.sort((a, b) => a.createdAt - b.createdAt);
    },
    async addSigningKey(key) {
      if (!(await insert(keys.signingKey(key.kid), key)))
        throw new Error(`signing key ${key.kid} already exists`);
    },
    async updateSigningKey(key) {
      return atomically(async () => {
        const current = await kv.get(keys.signingKey(key.kid));
        if (current === null) return { done: false };
        return {
          checks: [at(keys.signingKey(key.kid), current.version)],
          writes: [put(keys.signingKey(key.kid), key)],
          result: true,
        };
      });
    },

    async deleteExpired(now) {
      let removed = 0;
      /** Deletes `key` when `expired(value)`, unless it changed since it was read. */
      async function sweep<T>(prefix: string, expired: (value: T) => boolean): Promise<void> {
        for (const key of await kv.list(prefix)) {
          const found = await read<T>(key);
          if (
            found !== null &&
            expired(found.record) &&
            (await kv.commit([at(key, found.version)], [remove(key)]))
          ) {
            removed++;
          }
        }
      }
      await sweep<ClientRecord>('client/', (c) => c.expiresAt !== undefined && c.expiresAt <= now);
      await sweep<PendingAuthorizationRecord>('pending/', (p) => p.expiresAt <= now);
      await sweep<AuthorizationCodeRecord>('code/', (c) => c.expiresAt + CODE_TOMBSTONE_SECONDS <= now);
      await sweep<AccessTokenRecord>('access/', (t) => t.expiresAt <= now);
      await sweep<RefreshTokenRecord>('refresh/', (t) => t.expiresAt <= now);
      await sweep<GrantEntry>(
        'grant/',
        (g) =>
          (g.record !== null && g.record.expiresAt <= now) ||
          (g.revokedAt !== undefined && g.revokedAt + CODE_TOMBSTONE_SECONDS <= now),
      );
      await sweep<SigningKeyRecord>('key/', (k) => k.expiresAt !== undefined && k.expiresAt <= now);
      return removed;
    },
    async close() {},
  };
}
