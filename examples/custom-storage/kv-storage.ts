/**
 * A third-party storage adapter: {@link Storage} over a key-value store that keeps JSON strings,
 * as Deno KV, FoundationDB, etcd or DynamoDB do. It shows the one thing an adapter must get right:
 * each ATOMIC step of the contract (consuming or completing a pending authorization, redeeming a
 * code, rotating a refresh token) is one conditional commit, retried on fresh data when another writer got there
 * first. Everything else is plain reads and writes. It passes `runStorageConformance`, across two
 * instances over one store (see test/examples/custom-storage.test.ts).
 *
 * Data layout (every value is a JSON string): `client/<id>`, `pending/<hash>`, `code/<hash>`,
 * `grant/<id>`, `access/<hash>`, `refresh/<hash>`, `consent/<user>/<client>`, `key/<kid>`, and the
 * index `user-grant/<user>/<grantId>` (parts URI-encoded). Tokens are not rewritten when their
 * grant is revoked: every token read checks its grant, so revoking a grant is a single write, and
 * a token written by a rotation that raced the revocation still reads as revoked.
 *
 * Scans (`clients.delete`, `deleteExpired`) walk a prefix; a production adapter would keep indexes
 * or use the store's own expiry.
 */
import {
  type AccessTokenRecord,
  type AuthorizationCodeRecord,
  type ClientRecord,
  CODE_TOMBSTONE_SECONDS,
  type ConsentRecord,
  type GrantRecord,
  type PendingAuthorizationRecord,
  type RedeemResult,
  type RefreshTokenRecord,
  type RotateResult,
  type SigningKeyRecord,
  type Storage,
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
      if (checks.some(({ key, version }) => (map.get(key)?.version ?? null) !== version)) return false;
      clock++;
      for (const { key, value } of writes) {
        if (value === null) map.delete(key);
        else map.set(key, { value, version: clock });
      }
      return true;
    },
  };
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
  replay: (key: string) => `replay/${part(key)}`,
};

type Check = Parameters<KeyValueStore['commit']>[0][number];
type Write = Parameters<KeyValueStore['commit']>[1][number];
/** What one attempt of an atomic step decided: a result without writing, or a commit to try. */
type Plan<R> =
  | { readonly done: R }
  | { readonly checks: Check[]; readonly writes: Write[]; readonly result: R };

const put = (key: string, value: unknown): Write => ({ key, value: JSON.stringify(value) });
const remove = (key: string): Write => ({ key, value: null });
const at = (key: string, version: number | null): Check => ({ key, version });
const active = (grant: GrantRecord | undefined, now: number): grant is GrantRecord =>
  grant !== undefined && grant.revokedAt === undefined && grant.expiresAt > now;

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
  const value = async <T>(key: string) => (await read<T>(key))?.record;
  /** Writes `record` at `key` unless the key exists; throws if it does. */
  async function insert(key: string, record: unknown): Promise<void> {
    if (!(await kv.commit([at(key, null)], [put(key, record)]))) throw new Error(`${key} already exists`);
  }
  const write = async (key: string, record: unknown) => void (await kv.commit([], [put(key, record)]));

  /**
   * The read-check-write loop every atomic step uses: `step` reads and decides; when its commit
   * loses a race, it runs again on fresh data.
   */
  async function atomically<R>(step: () => Promise<Plan<R>>): Promise<R> {
    for (;;) {
      const plan = await step();
      if ('done' in plan) return plan.done;
      if (await kv.commit(plan.checks, plan.writes)) return plan.result;
    }
  }

  /** Replaces the value at `key` with `change(value)` unless it is absent or `change` says no. */
  const update = <T>(key: string, change: (current: T) => T | undefined) =>
    atomically<boolean>(async () => {
      const found = await read<T>(key);
      const next = found === null ? undefined : change(found.record);
      if (found === null || next === undefined) return { done: false };
      return { checks: [at(key, found.version)], writes: [put(key, next)], result: true };
    });

  const revoke = (grantId: string, now: number) =>
    update<GrantRecord>(keys.grant(grantId), (g) =>
      g.revokedAt === undefined ? { ...g, revokedAt: now } : undefined,
    );

  /** A token, if neither it nor its grant is revoked or expired. */
  async function liveToken<T extends AccessTokenRecord | RefreshTokenRecord>(
    key: string,
    now: number,
    grantExpires: boolean,
  ) {
    const token = await value<T>(key);
    if (token === undefined || token.revokedAt !== undefined || token.expiresAt <= now) return null;
    const grant = await value<GrantRecord>(keys.grant(token.grantId));
    if (grant === undefined || grant.revokedAt !== undefined) return null;
    return grantExpires && grant.expiresAt <= now ? null : token;
  }

  return {
    clients: {
      create: (client) => insert(keys.client(client.clientId), client),
      async get(clientId, now) {
        const client = await value<ClientRecord>(keys.client(clientId));
        return client === undefined || (client.expiresAt ?? Number.POSITIVE_INFINITY) <= now ? null : client;
      },
      clearExpiry: (clientId) =>
        update<ClientRecord>(keys.client(clientId), ({ expiresAt: _cleared, ...kept }) => kept),
      async delete(clientId, now) {
        if (!(await kv.get(keys.client(clientId)))) return false;
        await kv.commit([], [remove(keys.client(clientId))]);
        for (const key of await kv.list('consent/')) {
          if ((await value<ConsentRecord>(key))?.clientId === clientId) await kv.commit([], [remove(key)]);
        }
        for (const key of await kv.list('grant/')) {
          const grant = await value<GrantRecord>(key);
          if (grant?.clientId === clientId) await revoke(grant.grantId, now);
        }
        return true;
      },
    },

    interactions: {
      create: (pending) => write(keys.pending(pending.idHash), pending),
      async get(idHash, now) {
        const pending = await value<PendingAuthorizationRecord>(keys.pending(idHash));
        return pending === undefined || pending.expiresAt <= now ? null : pending;
      },
      bind: (idHash, binding, now) =>
        update<PendingAuthorizationRecord>(keys.pending(idHash), (pending) =>
          pending.expiresAt <= now || (pending.userId !== undefined && pending.userId !== binding.userId)
            ? undefined
            : { ...pending, ...binding },
        ),
      // #region consume-pending
      consume: (idHash, now) =>
        // ATOMIC: delete the record only if nobody changed it since we read it. Of concurrent
        // callers, one commit succeeds; the others retry, find nothing, and get null.
        atomically(async () => {
          const found = await read<PendingAuthorizationRecord>(keys.pending(idHash));
          if (found === null) return { done: null };
          return {
            checks: [at(keys.pending(idHash), found.version)],
            writes: [remove(keys.pending(idHash))],
            result: found.record.expiresAt <= now ? null : found.record,
          };
        }),
      // #endregion consume-pending
      complete: ({ idHash, code, consent, boundTo, now }) =>
        // ATOMIC: removes the pending record and writes the code (and the grown consent) in one
        // commit, on the condition that neither the record nor the consent changed since read.
        // With `boundTo`, only a record bound to that user, consent form (CSRF hash) and session.
        atomically<boolean>(async () => {
          const found = await read<PendingAuthorizationRecord>(keys.pending(idHash));
          if (found === null || found.record.expiresAt <= now) return { done: false };
          const pending = found.record;
          if (
            boundTo !== undefined &&
            (pending.userId !== boundTo.userId ||
              pending.csrfHash !== boundTo.csrfHash ||
              (pending.sessionId !== undefined && pending.sessionId !== boundTo.sessionId))
          ) {
            return { done: false };
          }
          const checks = [at(keys.pending(idHash), found.version), at(keys.code(code.codeHash), null)];
          const writes = [remove(keys.pending(idHash)), put(keys.code(code.codeHash), code)];
          if (consent !== undefined) {
            const key = keys.consent(consent.userId, consent.clientId);
            const stored = await read<ConsentRecord>(key);
            const before = stored?.record;
            checks.push(at(key, stored?.version ?? null));
            writes.push(
              put(
                key,
                before === undefined
                  ? consent
                  : {
                      ...before,
                      scope: [...new Set([...before.scope, ...consent.scope])],
                      resources: [...new Set([...before.resources, ...consent.resources])],
                      updatedAt: consent.updatedAt,
                    },
              ),
            );
          }
          return { checks, writes, result: true };
        }),
    },

    codes: {
      create: (code) => write(keys.code(code.codeHash), code),
      async get(codeHash, now) {
        const code = await value<AuthorizationCodeRecord>(keys.code(codeHash));
        if (code === undefined) return null;
        return code.expiresAt + (code.consumedAt === undefined ? 0 : CODE_TOMBSTONE_SECONDS) > now
          ? code
          : null;
      },
      // #region redeem
      redeem: ({ codeHash, grant, accessToken, refreshToken, now }) =>
        // ATOMIC: one commit marks the code consumed and writes the grant with its tokens, on the
        // condition that the code is unchanged since read. Of concurrent redeemers one commits; the
        // others retry, find the code consumed, and are told it is a replay.
        atomically<RedeemResult>(async () => {
          const found = await read<AuthorizationCodeRecord>(keys.code(codeHash));
          const code = found?.record;
          if (found === null || code === undefined) return { done: { outcome: 'invalid' } };
          if (code.consumedAt !== undefined) {
            if (code.expiresAt + CODE_TOMBSTONE_SECONDS <= now) return { done: { outcome: 'invalid' } };
            return {
              done: { outcome: 'replayed', grantId: code.grantId, consumedAt: code.consumedAt },
            };
          }
          if (code.expiresAt <= now || code.grantId !== grant.grantId)
            return { done: { outcome: 'invalid' } };
          return {
            checks: [at(keys.code(codeHash), found.version), at(keys.grant(grant.grantId), null)],
            writes: [
              put(keys.code(codeHash), { ...code, consumedAt: now }),
              put(keys.grant(grant.grantId), grant),
              put(keys.userGrant(grant.userId, grant.grantId), grant.grantId),
              put(keys.access(accessToken.tokenHash), accessToken),
              ...(refreshToken === undefined
                ? []
                : [put(keys.refresh(refreshToken.tokenHash), refreshToken)]),
            ],
            result: { outcome: 'redeemed' },
          };
        }),
      // #endregion redeem
    },

    grants: {
      get: async (grantId) => (await value<GrantRecord>(keys.grant(grantId))) ?? null,
      async listByUser(userId, now) {
        const out: GrantRecord[] = [];
        for (const key of await kv.list(`user-grant/${part(userId)}/`)) {
          const grant = await value<GrantRecord>(keys.grant((await value<string>(key)) ?? ''));
          if (active(grant, now)) out.push(grant);
        }
        return out.sort((a, b) => b.createdAt - a.createdAt || (a.grantId < b.grantId ? -1 : 1));
      },
      revoke,
      getAccessToken: (tokenHash, now) => liveToken<AccessTokenRecord>(keys.access(tokenHash), now, false),
      addAccessToken: (token, now) =>
        // Conditional on the grant, so that a token is never added after the grant's revocation.
        atomically(async () => {
          const grant = await read<GrantRecord>(keys.grant(token.grantId));
          if (grant === null || !active(grant.record, now)) return { done: false };
          return {
            checks: [at(keys.grant(token.grantId), grant.version)],
            writes: [put(keys.access(token.tokenHash), token)],
            result: true,
          };
        }),
      revokeAccessToken: (tokenHash, now) =>
        update<AccessTokenRecord>(keys.access(tokenHash), (t) =>
          t.revokedAt === undefined ? { ...t, revokedAt: now } : undefined,
        ),
      getRefreshToken: (tokenHash, now) => liveToken<RefreshTokenRecord>(keys.refresh(tokenHash), now, true),
      // #region rotate-refresh
      rotateRefreshToken: ({ tokenHash, successor, accessToken, sealedSuccessor, now }) =>
        // ATOMIC: the commit is conditional on both the presented token and its grant, so of
        // concurrent rotations one wins; the others retry and report the rotation that won. A
        // revocation committed in between changes the grant: the rotation retries and is invalid.
        atomically<RotateResult>(async () => {
          const old = await read<RefreshTokenRecord>(keys.refresh(tokenHash));
          const token = old?.record;
          if (old === null || token === undefined || token.revokedAt !== undefined || token.expiresAt <= now)
            return { done: { outcome: 'invalid' } };
          const grant = await read<GrantRecord>(keys.grant(token.grantId));
          if (grant === null || !active(grant.record, now)) return { done: { outcome: 'invalid' } };
          if (token.rotatedAt !== undefined) {
            const { grantId, rotatedAt, successorHash = '', sealedSuccessor: sealed } = token;
            return {
              done: {
                outcome: 'already_rotated',
                grantId,
                rotatedAt,
                successorHash,
                ...(sealed === undefined ? {} : { sealedSuccessor: sealed }),
              },
            };
          }
          const rotated = {
            ...token,
            rotatedAt: now,
            successorHash: successor.tokenHash,
            ...(sealedSuccessor === undefined ? {} : { sealedSuccessor }),
          };
          return {
            checks: [at(keys.refresh(tokenHash), old.version), at(keys.grant(token.grantId), grant.version)],
            writes: [
              put(keys.refresh(tokenHash), rotated),
              put(keys.refresh(successor.tokenHash), successor),
              put(keys.access(accessToken.tokenHash), accessToken),
            ],
            result: { outcome: 'rotated' },
          };
        }),
      // #endregion rotate-refresh
    },

    consents: {
      get: async (userId, clientId) => (await value<ConsentRecord>(keys.consent(userId, clientId))) ?? null,
      save: (consent) => write(keys.consent(consent.userId, consent.clientId), consent),
      async delete(userId, clientId) {
        const found = await kv.get(keys.consent(userId, clientId));
        return (
          found !== null &&
          kv.commit(
            [at(keys.consent(userId, clientId), found.version)],
            [remove(keys.consent(userId, clientId))],
          )
        );
      },
    },

    keys: {
      async list() {
        const all = await Promise.all((await kv.list('key/')).map((key) => value<SigningKeyRecord>(key)));
        // Insertion order, then a stable sort by creation time.
        return all.filter((k) => k !== undefined).sort((a, b) => a.createdAt - b.createdAt);
      },
      add: (key) => insert(keys.signingKey(key.kid), key),
      update: (key) => update<SigningKeyRecord>(keys.signingKey(key.kid), () => key),
    },

    replay: {
      // One conditional commit: new, or expired and unchanged since read. A loser of the race
      // reads again and finds the winner's unexpired key.
      checkAndStore: (key, expiresAt, now) =>
        atomically<boolean>(async () => {
          const found = await read<{ expiresAt: number }>(keys.replay(key));
          if (found !== null && found.record.expiresAt > now) return { done: false };
          return {
            checks: [at(keys.replay(key), found?.version ?? null)],
            writes: [put(keys.replay(key), { expiresAt })],
            result: true,
          };
        }),
    },

    async deleteExpired(now) {
      let removed = 0;
      /** Deletes each key under `prefix` whose value `expired` says is, unless it changed since read. */
      async function sweep<T>(
        prefix: string,
        expired: (value: T) => boolean | Promise<boolean>,
      ): Promise<void> {
        for (const key of await kv.list(prefix)) {
          const found = await read<T>(key);
          if (
            found !== null &&
            (await expired(found.record)) &&
            (await kv.commit([at(key, found.version)], [remove(key)]))
          )
            removed++;
        }
      }
      const past = (t: { readonly expiresAt?: number }) => t.expiresAt !== undefined && t.expiresAt <= now;
      await sweep<ClientRecord>('client/', past);
      await sweep<PendingAuthorizationRecord>('pending/', past);
      await sweep<AuthorizationCodeRecord>('code/', (c) => c.expiresAt + CODE_TOMBSTONE_SECONDS <= now);
      await sweep<AccessTokenRecord>('access/', past);
      await sweep<RefreshTokenRecord>('refresh/', past);
      // The grants that still have an unexpired token; the others cannot be used any more. Only
      // grants older than the scan are judged: one redeemed meanwhile has tokens the scan missed.
      const used = new Set<string>();
      for (const key of [...(await kv.list('access/')), ...(await kv.list('refresh/'))]) {
        const token = await value<AccessTokenRecord | RefreshTokenRecord>(key);
        if (token !== undefined && !past(token)) used.add(token.grantId);
      }
      await sweep<GrantRecord>(
        'grant/',
        (g) =>
          past(g) ||
          (!used.has(g.grantId) && g.createdAt + CODE_TOMBSTONE_SECONDS <= now) ||
          (g.revokedAt ?? Number.POSITIVE_INFINITY) + CODE_TOMBSTONE_SECONDS <= now,
      );
      await sweep<string>('user-grant/', async (grantId) => (await kv.get(keys.grant(grantId))) === null);
      await sweep<SigningKeyRecord>('key/', past);
      await sweep<{ expiresAt: number }>('replay/', past);
      return removed;
    },
    async close() {},
  };
}
