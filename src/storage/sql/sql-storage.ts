/**
 * The {@link Storage} contract over SQL, shared by the PostgreSQL and PGlite drivers. Every method
 * is one statement from `./statements.ts`; the atomic steps are conditional writes the database
 * decides, and only the failure paths of code consumption and refresh rotation add a read to say
 * why nothing matched.
 * @module
 */
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ClientRecord,
  ConsentRecord,
  ConsumeCodeResult,
  GrantIssuance,
  GrantRecord,
  PendingAuthorizationRecord,
  RefreshTokenRecord,
  RotateResult,
  RotationInput,
  SigningKeyRecord,
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
    this.#sql = storageStatements(settings.schema);
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

  async #first<Row>(statement: SqlStatement, params: unknown[]): Promise<Row | undefined> {
    return (await this.#rows<Row>(statement, params))[0];
  }

  // ---- clients -----------------------------------------------------------------------------------

  async createClient(client: ClientRecord): Promise<void> {
    await this.#rows(this.#sql.createClient, clientsTable.params(client));
  }

  async getClient(clientId: string, now: number): Promise<ClientRecord | null> {
    const row = await this.#first<ClientRow>(this.#sql.getClient, [clientId, now]);
    return row === undefined ? null : clientsTable.record(row);
  }

  async updateClient(client: ClientRecord): Promise<boolean> {
    return (await this.#rows(this.#sql.updateClient, clientsTable.params(client))).length > 0;
  }

  async deleteClient(clientId: string, now: number): Promise<boolean> {
    return (await this.#rows(this.#sql.deleteClient, [clientId, now])).length > 0;
  }

  // ---- pending authorizations --------------------------------------------------------------------

  async createPendingAuthorization(pending: PendingAuthorizationRecord): Promise<void> {
    await this.#rows(this.#sql.createPendingAuthorization, pendingAuthorizationsTable.params(pending));
  }

  async getPendingAuthorization(idHash: string, now: number): Promise<PendingAuthorizationRecord | null> {
    const row = await this.#first<PendingRow>(this.#sql.getPendingAuthorization, [idHash, now]);
    return row === undefined ? null : pendingAuthorizationsTable.record(row);
  }

  async bindPendingAuthorization(
    idHash: string,
    binding: { readonly userId: string; readonly sessionId?: string; readonly csrfHash: string },
    now: number,
  ): Promise<boolean> {
    const params = [idHash, binding.userId, binding.sessionId ?? null, binding.csrfHash, now];
    return (await this.#rows(this.#sql.bindPendingAuthorization, params)).length > 0;
  }

  async consumePendingAuthorization(idHash: string, now: number): Promise<PendingAuthorizationRecord | null> {
    // DELETE ... RETURNING: of concurrent callers only one gets the row. An expired record is
    // removed all the same, and reported as absent.
    const row = await this.#first<PendingRow>(this.#sql.consumePendingAuthorization, [idHash]);
    return row === undefined || row.expires_at <= now ? null : pendingAuthorizationsTable.record(row);
  }

  // ---- authorization codes -----------------------------------------------------------------------

  async createAuthorizationCode(code: AuthorizationCodeRecord): Promise<void> {
    await this.#rows(this.#sql.createAuthorizationCode, authorizationCodesTable.params(code));
  }

  async getAuthorizationCode(codeHash: string, now: number): Promise<AuthorizationCodeRecord | null> {
    const row = await this.#first<CodeRow>(this.#sql.getAuthorizationCode, [codeHash, now]);
    return row === undefined ? null : authorizationCodesTable.record(row);
  }

  async consumeAuthorizationCode(codeHash: string, now: number): Promise<ConsumeCodeResult | null> {
    const won = await this.#first<CodeRow>(this.#sql.consumeAuthorizationCode, [codeHash, now]);
    if (won !== undefined) return { outcome: 'consumed', code: authorizationCodesTable.record(won) };
    // Nothing matched: unknown, expired, or consumed (by an earlier or a concurrent caller, whose
    // commit this new statement sees).
    const seen = await this.#first<CodeRow>(this.#sql.getAuthorizationCode, [codeHash, now]);
    if (seen === undefined || seen.consumed_at === null) return null;
    return { outcome: 'replayed', code: authorizationCodesTable.record(seen) };
  }

  // ---- grants and access tokens ------------------------------------------------------------------

  async createGrant({ grant, accessToken, refreshToken }: GrantIssuance): Promise<boolean> {
    const params = [...grantsTable.params(grant), ...accessTokensTable.params(accessToken)];
    if (refreshToken === undefined) return (await this.#rows(this.#sql.createGrant, params)).length > 0;
    params.push(...refreshTokensTable.params(refreshToken));
    return (await this.#rows(this.#sql.createGrantWithRefreshToken, params)).length > 0;
  }

  async getGrant(grantId: string): Promise<GrantRecord | null> {
    const row = await this.#first<GrantRow>(this.#sql.getGrant, [grantId]);
    return row === undefined ? null : grantsTable.record(row);
  }

  async listGrantsByUser(userId: string, now: number): Promise<GrantRecord[]> {
    const rows = await this.#rows<GrantRow>(this.#sql.listGrantsByUser, [userId, now]);
    return rows.map(grantsTable.record);
  }

  async revokeGrant(grantId: string, now: number): Promise<boolean> {
    const row = await this.#first<{ existed: boolean }>(this.#sql.revokeGrant, [grantId, now]);
    return row?.existed === true;
  }

  async createAccessToken(token: AccessTokenRecord): Promise<void> {
    await this.#rows(this.#sql.createAccessToken, accessTokensTable.params(token));
  }

  async getAccessToken(tokenHash: string, now: number): Promise<AccessTokenRecord | null> {
    const row = await this.#first<AccessTokenRow>(this.#sql.getAccessToken, [tokenHash, now]);
    return row === undefined ? null : accessTokensTable.record(row);
  }

  async revokeAccessToken(tokenHash: string, now: number): Promise<boolean> {
    return (await this.#rows(this.#sql.revokeAccessToken, [tokenHash, now])).length > 0;
  }

  // ---- refresh tokens ----------------------------------------------------------------------------

  async getRefreshToken(tokenHash: string, now: number): Promise<RefreshTokenRecord | null> {
    const row = await this.#first<RefreshTokenRow>(this.#sql.getRefreshToken, [tokenHash, now]);
    return row === undefined ? null : refreshTokensTable.record(row);
  }

  async rotateRefreshToken(
    oldHash: string,
    next: RotationInput,
    now: number,
    graceSeconds: number,
  ): Promise<RotateResult> {
    const params = [
      oldHash,
      now,
      next.sealedSuccessor ?? null,
      ...refreshTokensTable.params(next.refreshToken),
      ...accessTokensTable.params(next.accessToken),
    ];
    if ((await this.#rows(this.#sql.rotateRefreshToken, params)).length > 0) return { outcome: 'rotated' };
    // Nothing matched. Why is decided on facts that never revert (rotated_at is set once, revocation
    // is final), so this second statement cannot contradict the first.
    const previous = await this.getRefreshToken(oldHash, now);
    if (previous?.rotatedAt === undefined) return { outcome: 'invalid' };
    if (graceSeconds > 0 && now - previous.rotatedAt < graceSeconds) return { outcome: 'grace', previous };
    await this.revokeGrant(previous.grantId, now);
    return { outcome: 'reused', grantId: previous.grantId };
  }

  // ---- consents ----------------------------------------------------------------------------------

  async getConsent(userId: string, clientId: string): Promise<ConsentRecord | null> {
    const row = await this.#first<ConsentRow>(this.#sql.getConsent, [userId, clientId]);
    return row === undefined ? null : consentsTable.record(row);
  }

  async saveConsent(consent: ConsentRecord): Promise<void> {
    await this.#rows(this.#sql.saveConsent, consentsTable.params(consent));
  }

  async deleteConsent(userId: string, clientId: string): Promise<boolean> {
    return (await this.#rows(this.#sql.deleteConsent, [userId, clientId])).length > 0;
  }

  // ---- signing keys ------------------------------------------------------------------------------

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    const rows = await this.#rows<SigningKeyRow>(this.#sql.listSigningKeys, []);
    return rows.map(signingKeysTable.record);
  }

  async addSigningKey(key: SigningKeyRecord): Promise<void> {
    await this.#rows(this.#sql.addSigningKey, signingKeysTable.params(key));
  }

  async updateSigningKey(key: SigningKeyRecord): Promise<boolean> {
    return (await this.#rows(this.#sql.updateSigningKey, signingKeysTable.params(key))).length > 0;
  }

  // ---- housekeeping ------------------------------------------------------------------------------

  async deleteExpired(now: number): Promise<number> {
    const batch = this.#settings.deleteBatchSize;
    let removed = 0;
    for (const statement of this.#sql.deleteExpired) {
      // One short transaction per batch; a short batch means nothing (unlocked) is left.
      for (;;) {
        const row = await this.#first<{ deleted: number }>(statement, [now, batch]);
        const deleted = row?.deleted ?? 0;
        removed += deleted;
        if (deleted < batch) break;
      }
    }
    return removed;
  }

  async close(): Promise<void> {
    await this.#db.close();
  }
}
