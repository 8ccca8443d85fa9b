/**
 * The {@link Storage} contract over one SQLite file. Every method is a few synchronous statements
 * on prepared, reused statements; every atomic step (complete a pending authorization, redeem a
 * code, rotate a refresh token, revoke a grant, delete a client) is one `BEGIN IMMEDIATE`
 * transaction, which holds the file's single write lock from its first statement: of any number of
 * callers, in this process or another on the same file, one runs at a time, and each finds what the
 * previous one committed. Consuming a pending authorization is a single `DELETE ... RETURNING`.
 * Reads of a token check its grant, so a revocation wins every race. Access-token records are
 * reused per connection until a revocation here or a commit elsewhere (`token-cache.ts`).
 *
 * Failures: the database wrapper turns SQLite's transient ones (a lock held past the busy timeout)
 * into `StorageUnavailableError`, which the server answers `503 temporarily_unavailable` with
 * `Retry-After`; a transaction that throws has written nothing.
 * @module
 */

import { notRotated } from '../rotation.js';
import type {
  ClientStore,
  CodeStore,
  ConsentRecord,
  ConsentStore,
  GrantStore,
  InteractionStore,
  ReplayStore,
  RotateResult,
  SigningKeyStore,
  Storage,
} from '../types.js';
import { CODE_TOMBSTONE_SECONDS } from '../types.js';
import type { SqliteDatabase } from './database.js';
import { GroupCommit } from './group-commit.js';
import { ReadBatch } from './read-batch.js';
import {
  type AccessTokenRow,
  accessTokenParams,
  accessTokenRecord,
  type ClientRow,
  type CodeRow,
  type ConsentRow,
  clientParams,
  clientRecord,
  codeParams,
  codeRecord,
  consentParams,
  consentRecord,
  type GrantRow,
  grantParams,
  grantRecord,
  keyParams,
  keyRecord,
  type PendingRow,
  pendingParams,
  pendingRecord,
  type RefreshTokenRow,
  refreshTokenParams,
  refreshTokenRecord,
  type SigningKeyRow,
} from './rows.js';
import { migrateSqlite } from './schema.js';
import { DELETE_EXPIRED, SQL } from './statements.js';
import { accessTokenCacheOf } from './token-cache.js';

/** Settings of {@link SqliteStorage}, resolved by `sqliteStorage` from its options. */
export interface SqliteStorageSettings {
  /** Opens the database (or returns the host's); called once, on first use. */
  readonly open: () => Promise<SqliteDatabase>;
  /** Whether {@link SqliteStorage.close} closes the database (it opened it). */
  readonly owned: boolean;
  /** The most rows per DELETE in {@link SqliteStorage.deleteExpired}. */
  readonly deleteBatchSize: number;
  /** A monotonic clock in milliseconds that times the cleanup batches (default `performance.now`; tests pass their own). */
  readonly clock?: () => number;
}

const changed = (result: { changes: number | bigint }): boolean => Number(result.changes) > 0;

/** Gives the event loop a turn between cleanup batches, so that requests interleave with them. */
const yieldToRequests = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * How long one cleanup batch may take, in milliseconds. A batch runs on the server's thread and
 * holds the file's write lock, so it delays every request that arrives meanwhile, and its time per
 * row varies tenfold: on a file of a million tokens, a batch of 100 expired tokens that each empty
 * their grant (deleted with its other tokens) took 17 ms (median; up to 60), one of 1,000 several
 * hundred (docs/storage.md, "SQLite", Housekeeping).
 */
export const DELETE_BATCH_MILLIS = 10;

/** Rows of the first cleanup batch; later ones grow or shrink towards {@link DELETE_BATCH_MILLIS}. */
export const FIRST_DELETE_BATCH = 64;

/**
 * The size of the next cleanup batch after one of `size` rows took `millis`: scaled down to fit
 * the budget when it took longer (never below one row), doubled when it took under half of it,
 * never above `most`.
 */
function nextDeleteBatch(size: number, millis: number, most: number): number {
  if (millis > DELETE_BATCH_MILLIS) return Math.max(1, Math.floor((size * DELETE_BATCH_MILLIS) / millis));
  if (millis < DELETE_BATCH_MILLIS / 2) return Math.min(most, size * 2);
  return size;
}

/**
 * The storage over one SQLite database. `sqliteStorage` constructs it; hosts see only `Storage`.
 *
 * @example
 * ```ts
 * const storage: Storage = new SqliteStorage({ open: async () => db, owned: false, deleteBatchSize: 1000 });
 * ```
 */
export class SqliteStorage implements Storage {
  readonly clients: ClientStore;
  readonly interactions: InteractionStore;
  readonly codes: CodeStore;
  readonly grants: GrantStore;
  readonly consents: ConsentStore;
  readonly keys: SigningKeyStore;
  readonly replay: ReplayStore;
  readonly #settings: SqliteStorageSettings;
  readonly #group = new GroupCommit();
  readonly #reads = new ReadBatch();
  #db: SqliteDatabase | undefined;
  #opening: Promise<SqliteDatabase> | undefined;
  #closed = false;

  /**
   * @param settings - how to open the database, who closes it, cleanup batch size
   * @throws TypeError on an invalid batch size
   */
  constructor(settings: SqliteStorageSettings) {
    if (!Number.isInteger(settings.deleteBatchSize) || settings.deleteBatchSize < 1) {
      throw new TypeError('storage: deleteBatchSize must be a positive integer');
    }
    this.#settings = settings;
    /** Runs one read step with this turn's other reads (the database opened and migrated on first use). */
    const step = async <T>(body: (db: SqliteDatabase) => T): Promise<T> => {
      const db = this.#db ?? (await this.#open());
      return this.#reads.submit(db, () => body(db));
    };
    /** Runs one write step (its statements atomic together) in this turn's shared transaction. */
    const write = async <T>(body: (db: SqliteDatabase) => T): Promise<T> => {
      const db = this.#db ?? (await this.#open());
      return this.#group.submit(db, () => body(db));
    };

    this.clients = {
      create: (client) =>
        write((db) => {
          db.run(SQL.createClient, ...clientParams(client));
        }),
      get: (clientId, now) =>
        step((db) => {
          const row = db.get<ClientRow>(SQL.getClient, clientId, now);
          return row === undefined ? null : clientRecord(row);
        }),
      clearExpiry: (clientId) => write((db) => changed(db.run(SQL.clearClientExpiry, clientId))),
      delete: (clientId, now) =>
        write((db) => {
          accessTokenCacheOf(db).clear();
          if (!changed(db.run(SQL.deleteClient, clientId))) return false;
          db.run(SQL.deleteConsentsOfClient, clientId);
          db.run(SQL.revokeAccessTokensOfClient, now, clientId);
          db.run(SQL.revokeRefreshTokensOfClient, now, clientId);
          db.run(SQL.revokeGrantsOfClient, now, clientId);
          return true;
        }),
    };

    this.interactions = {
      create: (record) =>
        write((db) => {
          db.run(SQL.createPending, ...pendingParams(record));
        }),
      get: (idHash, now) =>
        step((db) => {
          const row = db.get<PendingRow>(SQL.getPending, idHash, now);
          return row === undefined ? null : pendingRecord(row);
        }),
      bind: (idHash, binding, now) =>
        write((db) =>
          changed(
            db.run(
              SQL.bindPending,
              binding.userId,
              binding.sessionId ?? null,
              binding.csrfHash,
              idHash,
              now,
              binding.userId,
            ),
          ),
        ),
      consume: (idHash, now) =>
        write((db) => {
          // An expired record is removed all the same, and reported as absent.
          const row = db.get<PendingRow>(SQL.consumePending, idHash);
          return row === undefined || row.expires_at <= now ? null : pendingRecord(row);
        }),
      complete: ({ idHash, code, consent, boundTo, now }) =>
        write((db) => {
          // The commit point: of concurrent callers, the first to take the write lock deletes the
          // row; the others find it gone. An expired record, or one bound to another user, form or
          // session, is left (and nothing is written).
          const removed =
            boundTo === undefined
              ? db.run(SQL.completePending, idHash, now)
              : db.run(
                  SQL.completeBoundPending,
                  idHash,
                  now,
                  boundTo.userId,
                  boundTo.csrfHash,
                  boundTo.sessionId ?? null,
                );
          if (!changed(removed)) return false;
          db.run(SQL.createCode, ...codeParams(code));
          if (consent !== undefined) {
            // Read and written under the same write lock: no other writer in between.
            const row = db.get<ConsentRow>(SQL.getConsent, consent.userId, consent.clientId);
            const stored = row === undefined ? consent : grownConsent(consentRecord(row), consent);
            db.run(SQL.saveConsent, ...consentParams(stored));
          }
          return true;
        }),
    };

    this.codes = {
      create: (code) =>
        write((db) => {
          db.run(SQL.createCode, ...codeParams(code));
        }),
      get: (codeHash, now) =>
        step((db) => {
          const row = db.get<CodeRow>(SQL.getCode, codeHash, now);
          return row === undefined ? null : codeRecord(row);
        }),
      redeem: ({ codeHash, grant, accessToken, refreshToken, now }) =>
        write((db) => {
          if (changed(db.run(SQL.consumeCode, now, codeHash, grant.grantId, now))) {
            db.run(SQL.createGrant, ...grantParams(grant));
            db.run(SQL.createAccessToken, ...accessTokenParams(accessToken));
            if (refreshToken !== undefined)
              db.run(SQL.createRefreshToken, ...refreshTokenParams(refreshToken));
            return { outcome: 'redeemed' } as const;
          }
          // Nothing matched: unknown, expired, bound to another grant id, or consumed (earlier, or
          // by a rival that held the write lock first). Read under the same lock: consistent.
          const code = db.get<{ grant_id: string; consumed_at: number | null; expires_at: number }>(
            SQL.codeState,
            codeHash,
          );
          if (code?.consumed_at == null || code.expires_at + CODE_TOMBSTONE_SECONDS <= now) {
            return { outcome: 'invalid' } as const;
          }
          return { outcome: 'replayed', grantId: code.grant_id, consumedAt: code.consumed_at } as const;
        }),
    };

    this.grants = {
      get: (grantId) =>
        step((db) => {
          const row = db.get<GrantRow>(SQL.getGrant, grantId);
          return row === undefined ? null : grantRecord(row);
        }),
      listByUser: (userId, now) =>
        step((db) => db.all<GrantRow>(SQL.listGrantsByUser, userId, now).map(grantRecord)),
      revoke: (grantId, now) =>
        write((db) => {
          accessTokenCacheOf(db).clear();
          const revoked = changed(db.run(SQL.revokeGrant, now, grantId));
          // The tokens even when the grant already was revoked: idempotent.
          db.run(SQL.revokeAccessTokensOfGrant, now, grantId);
          db.run(SQL.revokeRefreshTokensOfGrant, now, grantId);
          return revoked;
        }),
      getAccessToken: (tokenHash, now) =>
        step((db) =>
          accessTokenCacheOf(db).get(db, tokenHash, now, () => {
            const row = db.get<AccessTokenRow>(SQL.getAccessToken, tokenHash, now);
            return row === undefined ? null : accessTokenRecord(row);
          }),
        ),
      addAccessToken: (token, now) =>
        write((db) => changed(db.run(SQL.addAccessToken, ...accessTokenParams(token), token.grantId, now))),
      revokeAccessToken: (tokenHash, now) =>
        write((db) => {
          accessTokenCacheOf(db).clear();
          return changed(db.run(SQL.revokeAccessToken, now, tokenHash));
        }),
      getRefreshToken: (tokenHash, now) =>
        step((db) => {
          const row = db.get<RefreshTokenRow>(SQL.getRefreshToken, tokenHash, now, now);
          return row === undefined ? null : refreshTokenRecord(row);
        }),
      rotateRefreshToken: ({ tokenHash, successor, accessToken, sealedSuccessor, now }) =>
        write((db): RotateResult => {
          const rotated = db.run(
            SQL.rotateRefreshToken,
            now,
            successor.tokenHash,
            sealedSuccessor ?? null,
            tokenHash,
            now,
            now,
          );
          if (changed(rotated)) {
            db.run(SQL.createRefreshToken, ...refreshTokenParams(successor));
            db.run(SQL.createAccessToken, ...accessTokenParams(accessToken));
            return { outcome: 'rotated' };
          }
          // Nothing matched: read why, under the same write lock.
          const row = db.get<RefreshTokenRow>(SQL.getRefreshToken, tokenHash, now, now);
          return notRotated(row === undefined ? null : refreshTokenRecord(row));
        }),
    };

    this.consents = {
      get: (userId, clientId) =>
        step((db) => {
          const row = db.get<ConsentRow>(SQL.getConsent, userId, clientId);
          return row === undefined ? null : consentRecord(row);
        }),
      save: (consent) =>
        write((db) => {
          db.run(SQL.saveConsent, ...consentParams(consent));
        }),
      delete: (userId, clientId) => write((db) => changed(db.run(SQL.deleteConsent, userId, clientId))),
    };

    this.keys = {
      list: () => step((db) => db.all<SigningKeyRow>(SQL.listKeys).map(keyRecord)),
      add: (key) =>
        write((db) => {
          db.run(SQL.addKey, ...keyParams(key));
        }),
      update: (key) =>
        write((db) => {
          const [kid, ...rest] = keyParams(key);
          return changed(db.run(SQL.updateKey, ...rest, kid ?? null));
        }),
    };

    this.replay = {
      checkAndStore: (key, expiresAt, now) =>
        write((db) => db.get<{ key: string }>(SQL.checkAndStoreReplayKey, key, expiresAt, now) !== undefined),
    };
  }

  /** Opens (and migrates) the database once, on first use; retried after a failure. */
  #open(): Promise<SqliteDatabase> {
    if (this.#closed) return Promise.reject(new Error('the SQLite storage is closed'));
    this.#opening ??= (async () => {
      const db = await this.#settings.open();
      try {
        migrateSqlite(db, Math.floor(Date.now() / 1000));
      } catch (error) {
        if (this.#settings.owned) db.close();
        throw error;
      }
      this.#db = db;
      return db;
    })().catch((error: unknown) => {
      this.#opening = undefined;
      throw error;
    });
    return this.#opening;
  }

  /**
   * See {@link Storage.deleteExpired}: each cleanup in batches, each batch one short write
   * transaction, the event loop given a turn between batches. A batch of expired tokens deletes, in
   * its transaction, the grants it left without any unexpired token. Batches are sized by time, not
   * only by rows: the first has {@link FIRST_DELETE_BATCH} rows, each next one is scaled so that it
   * takes about {@link DELETE_BATCH_MILLIS}, up to `deleteBatchSize` rows.
   */
  async deleteExpired(now: number): Promise<number> {
    const db = this.#db ?? (await this.#open());
    const most = this.#settings.deleteBatchSize;
    const clock = this.#settings.clock ?? (() => performance.now());
    let size = Math.min(FIRST_DELETE_BATCH, most);
    let removed = 0;
    for (const { batch: statement, emptiedGrants } of DELETE_EXPIRED) {
      for (;;) {
        const started = clock();
        const { deleted, also } =
          emptiedGrants === undefined
            ? { deleted: Number(db.run(statement, now, size).changes), also: 0 }
            : db.transaction(() => {
                const rows = db.all<{ grant_id: string }>(statement, now, size);
                const grantIds = [...new Set(rows.map((row) => row.grant_id))];
                const emptied =
                  grantIds.length === 0
                    ? 0
                    : db.run(emptiedGrants, JSON.stringify(grantIds), now, now).changes;
                return { deleted: rows.length, also: Number(emptied) };
              });
        removed += deleted + also;
        if (deleted < size) break;
        size = nextDeleteBatch(size, clock() - started, most);
        await yieldToRequests();
      }
    }
    return removed;
  }

  /** Closes the database when the storage opened it. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // The steps already submitted (this turn's reads and writes) are answered first.
    await Promise.all([this.#reads.settled(), this.#group.settled()]);
    const opening = this.#opening;
    this.#db = undefined;
    this.#opening = undefined;
    if (!this.#settings.owned || opening === undefined) return;
    const db = await opening.catch(() => undefined);
    db?.close();
  }
}

/**
 * The consent `completion` grows `stored` into: the union of scopes and of resources, those stored
 * first, then the new ones, without duplicates; `createdAt` kept, `updatedAt` replaced.
 */
function grownConsent(stored: ConsentRecord, completion: ConsentRecord): ConsentRecord {
  return {
    ...stored,
    scope: [...new Set([...stored.scope, ...completion.scope])],
    resources: [...new Set([...stored.resources, ...completion.resources])],
    updatedAt: completion.updatedAt,
  };
}
