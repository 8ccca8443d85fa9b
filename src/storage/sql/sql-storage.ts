/**
 * The {@link Storage} contract over SQL, shared by the PostgreSQL and PGlite drivers. Every method
 * is one statement from `./statements.ts`; the atomic steps are conditional writes the database
 * decides, and only the failure paths of a code redemption and a refresh rotation add a read to
 * say why nothing matched.
 * @module
 */
import type {
  ClientStore,
  CodeStore,
  ConsentStore,
  GrantStore,
  InteractionStore,
  RotateResult,
  SigningKeyStore,
  Storage,
} from '../types.js';
import type { SqlExecutor, SqlStatement } from './executor.js';
import { LATEST_VERSION, migrateSchema, schemaVersion } from './migrations.js';
import { type StorageStatements, storageStatements } from './statements.js';
import {
  type AccessTokenRow,
  accessTokensTable,
  authorizationCodesTable,
  type ClientRow,
  type CodeRow,
  type ConsentRow,
  clientsTable,
  consentsTable,
  type GrantRow,
  grantsTable,
  type PendingRow,
  pendingAuthorizationsTable,
  type RefreshTokenRow,
  refreshTokensTable,
  type SigningKeyRow,
  signingKeysTable,
} from './tables.js';

/** Settings of {@link SqlStorage}, resolved by the driver from its public options. */
export interface SqlStorageSettings {
  /** The (unquoted, validated) schema of the tables. */
  readonly schema: string;
  /** Migrate on first use (true), or only check that the schema is up to date (false). */
  readonly autoMigrate: boolean;
  /** Rows per DELETE in {@link SqlStorage.deleteExpired}. */
  readonly deleteBatchSize: number;
}

/**
 * The storage over one {@link SqlExecutor}. Drivers construct it; hosts see only `Storage`.
 *
 * @example
 * ```ts
 * const storage: Storage = new SqlStorage(executor, { schema: 'portcullis', autoMigrate: true, deleteBatchSize: 1000 });
 * ```
 */
export class SqlStorage implements Storage {
  readonly clients: ClientStore;
  readonly interactions: InteractionStore;
  readonly codes: CodeStore;
  readonly grants: GrantStore;
  readonly consents: ConsentStore;
  readonly keys: SigningKeyStore;
  readonly #db: SqlExecutor;
  readonly #sql: StorageStatements;
  readonly #settings: SqlStorageSettings;
  #ready = false;
  #preparing: Promise<void> | undefined;

  /**
   * @param db - the driver's executor; {@link SqlStorage.close} closes it
   * @param settings - schema, migration and cleanup settings
   * @throws TypeError on an invalid schema name or batch size
   */
  constructor(db: SqlExecutor, settings: SqlStorageSettings) {
    if (!Number.isInteger(settings.deleteBatchSize) || settings.deleteBatchSize < 1) {
      throw new TypeError('storage: deleteBatchSize must be a positive integer');
    }
    this.#db = db;
    this.#settings = settings;
    const sql = storageStatements(settings.schema);
    this.#sql = sql;
    const rows = <Row>(statement: SqlStatement, params: unknown[]) => this.#rows<Row>(statement, params);
    const first = async <Row>(statement: SqlStatement, params: unknown[]) =>
      (await rows<Row>(statement, params))[0];
    const some = async (statement: SqlStatement, params: unknown[]) =>
      (await rows(statement, params)).length > 0;

    this.clients = {
      async create(client) {
        await rows(sql.createClient, clientsTable.params(client));
      },
      async get(clientId, now) {
        const row = await first<ClientRow>(sql.getClient, [clientId, now]);
        return row === undefined ? null : clientsTable.record(row);
      },
      clearExpiry: (clientId) => some(sql.clearClientExpiry, [clientId]),
      delete: (clientId, now) => some(sql.deleteClient, [clientId, now]),
    };

    this.interactions = {
      async create(pending) {
        await rows(sql.createPendingAuthorization, pendingAuthorizationsTable.params(pending));
      },
      async get(idHash, now) {
        const row = await first<PendingRow>(sql.getPendingAuthorization, [idHash, now]);
        return row === undefined ? null : pendingAuthorizationsTable.record(row);
      },
      bind: (idHash, binding, now) =>
        some(sql.bindPendingAuthorization, [
          idHash,
          binding.userId,
          binding.sessionId ?? null,
          binding.csrfHash,
          now,
        ]),
      async consume(idHash, now) {
        // DELETE ... RETURNING: of concurrent callers only one gets the row. An expired record is
        // removed all the same, and reported as absent.
        const row = await first<PendingRow>(sql.consumePendingAuthorization, [idHash]);
        return row === undefined || row.expires_at <= now ? null : pendingAuthorizationsTable.record(row);
      },
    };

    this.codes = {
      async create(code) {
        await rows(sql.createAuthorizationCode, authorizationCodesTable.params(code));
      },
      async get(codeHash, now) {
        const row = await first<CodeRow>(sql.getAuthorizationCode, [codeHash, now]);
        return row === undefined ? null : authorizationCodesTable.record(row);
      },
      async redeem({ codeHash, grant, accessToken, refreshToken, now }) {
        const params = [
          now,
          codeHash,
          ...grantsTable.params(grant),
          ...accessTokensTable.params(accessToken),
        ];
        const redeemed =
          refreshToken === undefined
            ? await some(sql.redeemCode, params)
            : await some(sql.redeemCodeWithRefreshToken, [
                ...params,
                ...refreshTokensTable.params(refreshToken),
              ]);
        if (redeemed) return { outcome: 'redeemed' };
        // Nothing matched: unknown, expired, or consumed (by an earlier or a concurrent caller,
        // whose commit this new statement sees). consumed_at never reverts, so this cannot
        // contradict the redemption.
        const seen = await first<{ grant_id: string; consumed_at: number }>(sql.consumedCode, [
          codeHash,
          now,
        ]);
        if (seen === undefined) return { outcome: 'invalid' };
        return { outcome: 'replayed', grantId: seen.grant_id, consumedAt: seen.consumed_at };
      },
    };

    this.grants = {
      async get(grantId) {
        const row = await first<GrantRow>(sql.getGrant, [grantId]);
        return row === undefined ? null : grantsTable.record(row);
      },
      async listByUser(userId, now) {
        return (await rows<GrantRow>(sql.listGrantsByUser, [userId, now])).map(grantsTable.record);
      },
      revoke: (grantId, now) => some(sql.revokeGrant, [grantId, now]),
      async getAccessToken(tokenHash, now) {
        const row = await first<AccessTokenRow>(sql.getAccessToken, [tokenHash, now]);
        return row === undefined ? null : accessTokensTable.record(row);
      },
      addAccessToken: (token, now) => some(sql.addAccessToken, [...accessTokensTable.params(token), now]),
      revokeAccessToken: (tokenHash, now) => some(sql.revokeAccessToken, [tokenHash, now]),
      async getRefreshToken(tokenHash, now) {
        const row = await first<RefreshTokenRow>(sql.getRefreshToken, [tokenHash, now]);
        return row === undefined ? null : refreshTokensTable.record(row);
      },
      async rotateRefreshToken({
        tokenHash,
        successor,
        accessToken,
        sealedSuccessor,
        now,
      }): Promise<RotateResult> {
        const params = [
          tokenHash,
          now,
          sealedSuccessor ?? null,
          ...refreshTokensTable.params(successor),
          ...accessTokensTable.params(accessToken),
        ];
        if (await some(sql.rotateRefreshToken, params)) return { outcome: 'rotated' };
        // Nothing matched. Why is read on facts that never revert (rotated_at is set once,
        // revocation is final), so this second statement cannot contradict the first.
        const row = await first<RefreshTokenRow>(sql.getRefreshToken, [tokenHash, now]);
        if (row === undefined || row.rotated_at === null || row.successor_hash === null)
          return { outcome: 'invalid' };
        return {
          outcome: 'already_rotated',
          grantId: row.grant_id,
          rotatedAt: row.rotated_at,
          successorHash: row.successor_hash,
          ...(row.sealed_successor === null ? {} : { sealedSuccessor: row.sealed_successor }),
        };
      },
    };

    this.consents = {
      async get(userId, clientId) {
        const row = await first<ConsentRow>(sql.getConsent, [userId, clientId]);
        return row === undefined ? null : consentsTable.record(row);
      },
      async save(consent) {
        await rows(sql.saveConsent, consentsTable.params(consent));
      },
      delete: (userId, clientId) => some(sql.deleteConsent, [userId, clientId]),
    };

    this.keys = {
      async list() {
        return (await rows<SigningKeyRow>(sql.listSigningKeys, [])).map(signingKeysTable.record);
      },
      async add(key) {
        await rows(sql.addSigningKey, signingKeysTable.params(key));
      },
      update: (key) => some(sql.updateSigningKey, signingKeysTable.params(key)),
    };
  }

  /** Migrates (or checks the schema version) once, before the first statement; retried after a failure. */
  #prepare(): Promise<void> {
    this.#preparing ??= (async () => {
      const { schema, autoMigrate } = this.#settings;
      if (autoMigrate) {
        await migrateSchema(this.#db, schema, Math.floor(Date.now() / 1000));
      } else {
        const version = await schemaVersion(this.#db, schema);
        if (version < LATEST_VERSION) {
          throw new Error(
            `storage schema "${schema}" is at version ${version}, this release needs ${LATEST_VERSION}: ` +
              'run portcullis-migrate (or migrate()) first, or enable autoMigrate',
          );
        }
      }
      this.#ready = true;
    })().catch((error: unknown) => {
      this.#preparing = undefined;
      throw error;
    });
    return this.#preparing;
  }

  async #rows<Row>(statement: SqlStatement, params: unknown[]): Promise<Row[]> {
    if (!this.#ready) await this.#prepare();
    return this.#db.query<Row>(statement, params);
  }

  /** See {@link Storage.deleteExpired}: each statement in batches until a batch comes back short. */
  async deleteExpired(now: number): Promise<number> {
    const batch = this.#settings.deleteBatchSize;
    let removed = 0;
    for (const statement of this.#sql.deleteExpired) {
      // One short transaction per batch; a short batch means nothing (unlocked) is left.
      for (;;) {
        const [row] = await this.#rows<{ deleted: number }>(statement, [now, batch]);
        const deleted = row?.deleted ?? 0;
        removed += deleted;
        if (deleted < batch) break;
      }
    }
    return removed;
  }

  /** Closes the executor (a pool or database the driver opened). */
  async close(): Promise<void> {
    await this.#db.close();
  }
}
