/**
 * The {@link Storage} contract over SQL, shared by the PostgreSQL and PGlite drivers. Every method
 * is one statement from `./statements.ts`; the atomic steps are conditional writes the database
 * decides, and only the failure paths of a code redemption and a refresh rotation add a read to
 * say why nothing matched. Under load, the writes of the code flow and of a refresh that queue
 * behind a busy one of their kind go together, one statement for the batch ({@link BatchedStep}).
 *
 * A statement whose connection broke (or that lost a serialization race) is tried once more, on
 * another connection, when that cannot do harm ({@link Retry}): reads and idempotent writes are
 * repeated; an insert of a fresh random key that meets its own row on the retry succeeded the
 * first time; the atomic steps are repeated and, when they then find their work done, recognise
 * their own write (our access token, our successor, our code) so a lost answer is not mistaken for
 * a replay. Consuming a pending authorization is never repeated: its answer is the record.
 * @module
 */

import { notRotated } from '../rotation.js';
import type {
  ClientStore,
  CodeRedemption,
  CodeStore,
  ConsentStore,
  GrantStore,
  InteractionCompletion,
  InteractionStore,
  PendingAuthorizationRecord,
  RedeemResult,
  RefreshRotation,
  ReplayStore,
  RotateResult,
  SigningKeyStore,
  Storage,
} from '../types.js';
import { StorageUnavailableError, type StorageUnavailableReason } from '../unavailable.js';
import { Batcher, type BatchOutcome } from './batch.js';
import type { SqlExecutor, SqlStatement } from './executor.js';
import { LATEST_VERSION, migrateSchema, schemaVersion } from './migrations.js';
import { type Executed, executeWithRetry, isUniqueViolation, type Retry } from './retry.js';
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

/**
 * Failures of a batch after which each of its steps runs alone: a conflict (rolled back for
 * certain) and a lost connection (repeated, as a single statement would be).
 */
const RETRIED_ALONE: ReadonlySet<StorageUnavailableReason> = new Set(['conflict', 'connection_lost']);

/**
 * A write step the SQL storage runs in batches (`./batch.ts`): one step arriving alone runs its
 * own statement; those that queue behind a busy batch go together as one statement, each decided
 * as it would be alone.
 */
interface BatchedStep<In, Out> {
  /** The batch's statement: `$1` the items as a JSON array; returns a `key` for each item that took effect. */
  readonly statement: SqlStatement;
  /** The input's element of that array. */
  item(input: In): unknown;
  /** The fresh random value (a new code's or token's hash) returned as `key` when the input took effect. */
  key(input: In): string;
  /** The outcome of an input that took effect. */
  readonly done: Out;
  /** The outcome of an input that a committed batch did not apply (it lost a race, or did not match). */
  notDone(input: In): Promise<Out>;
  /**
   * The step as its own statement. `uncertain`: a batch holding it was lost and may have committed,
   * so the step recognises its own write found done.
   */
  alone(input: In, uncertain: boolean): Promise<Out>;
}

const settled = async <Out>(result: Promise<Out>): Promise<BatchOutcome<Out>> =>
  result.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );

/** Settings of {@link SqlStorage}, resolved by the driver from its public options. */
export interface SqlStorageSettings {
  /** The (unquoted, validated) schema of the tables. */
  readonly schema: string;
  /** Migrate on first use (true), or only check that the schema is up to date (false). */
  readonly autoMigrate: boolean;
  /** Rows per DELETE in {@link SqlStorage.deleteExpired}. */
  readonly deleteBatchSize: number;
  /**
   * Tests only: a write step arriving alone also runs its batch's statement (a batch of one), so
   * that the conformance kit checks the batch functions as thoroughly as the single statements.
   */
  readonly batchAlone?: boolean;
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
  readonly replay: ReplayStore;
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
    const exec = <Row>(statement: SqlStatement, params: unknown[], retry: Retry = 'repeat') =>
      this.#execute<Row>(statement, params, retry);
    const rows = async <Row>(statement: SqlStatement, params: unknown[], retry: Retry = 'repeat') =>
      (await exec<Row>(statement, params, retry)).rows;
    const first = async <Row>(statement: SqlStatement, params: unknown[]) =>
      (await rows<Row>(statement, params))[0];
    const some = async (statement: SqlStatement, params: unknown[]) =>
      (await rows(statement, params)).length > 0;

    this.clients = {
      async create(client) {
        await exec(sql.createClient, clientsTable.params(client), 'insert');
      },
      async get(clientId, now) {
        const row = await first<ClientRow>(sql.getClient, [clientId, now]);
        return row === undefined ? null : clientsTable.record(row);
      },
      clearExpiry: (clientId) => some(sql.clearClientExpiry, [clientId]),
      delete: (clientId, now) => some(sql.deleteClient, [clientId, now]),
    };

    const createAlone = async (pending: PendingAuthorizationRecord, uncertain: boolean) => {
      try {
        await exec(sql.createPendingAuthorization, pendingAuthorizationsTable.params(pending), 'insert');
      } catch (error) {
        // The lost batch had committed: the row is ours (its key is a fresh random value).
        if (!(uncertain && isUniqueViolation(error))) throw error;
      }
    };
    const creations = this.#batched<PendingAuthorizationRecord, void>({
      statement: sql.createPendingAuthorizations,
      item: (pending) => ({
        ...pendingAuthorizationsTable.columns.row(pendingAuthorizationsTable.params(pending)),
        request: pending.request,
      }),
      key: (pending) => pending.idHash,
      done: undefined,
      notDone: () =>
        Promise.reject(new Error('storage: a batch of pending authorizations inserted only some')),
      alone: createAlone,
    });

    const completeAlone = async (
      { idHash, code, consent, boundTo, now }: InteractionCompletion,
      uncertain: boolean,
    ) => {
      const binding =
        boundTo === undefined
          ? [null, null, null]
          : [boundTo.userId, boundTo.csrfHash, boundTo.sessionId ?? null];
      const params = [idHash, now, ...binding, ...authorizationCodesTable.params(code)];
      const done =
        consent === undefined
          ? await exec(sql.completePendingAuthorization, params)
          : await exec(sql.completePendingAuthorizationWithConsent, [
              ...params,
              ...consentsTable.params(consent),
            ]);
      if (done.rows.length > 0) return true;
      // Nothing matched on a repetition: if the first attempt committed, our code is there.
      return (uncertain || done.uncertain) && (await some(sql.codeExists, [code.codeHash]));
    };
    const completions = this.#batched<InteractionCompletion, boolean>({
      statement: sql.completePendingAuthorizations,
      item: ({ idHash, code, consent, boundTo, now }) => ({
        id: idHash,
        now,
        user: boundTo?.userId ?? null,
        csrf: boundTo?.csrfHash ?? null,
        session: boundTo?.sessionId ?? null,
        code: authorizationCodesTable.columns.row(authorizationCodesTable.params(code)),
        consent: consent === undefined ? null : consentsTable.columns.row(consentsTable.params(consent)),
      }),
      key: (completion) => completion.code.codeHash,
      done: true,
      notDone: async () => false,
      alone: completeAlone,
    });

    this.interactions = {
      create: (pending) => creations.submit(pending),
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
        const [row] = await rows<PendingRow>(sql.consumePendingAuthorization, [idHash], 'never');
        return row === undefined || row.expires_at <= now ? null : pendingAuthorizationsTable.record(row);
      },
      complete: (completion) => completions.submit(completion),
    };

    // Nothing matched: unknown, expired, or consumed (by an earlier or a concurrent caller, whose
    // commit this new statement sees). consumed_at never reverts, so this cannot contradict the
    // redemption.
    const notRedeemed = async ({ codeHash, now }: CodeRedemption): Promise<RedeemResult> => {
      const seen = await first<{ grant_id: string; consumed_at: number }>(sql.consumedCode, [codeHash, now]);
      if (seen === undefined) return { outcome: 'invalid' };
      return { outcome: 'replayed', grantId: seen.grant_id, consumedAt: seen.consumed_at };
    };
    const redeemAlone = async (redemption: CodeRedemption, uncertain: boolean): Promise<RedeemResult> => {
      const { codeHash, grant, accessToken, refreshToken, now } = redemption;
      const params = [now, codeHash, ...grantsTable.params(grant), ...accessTokensTable.params(accessToken)];
      const done =
        refreshToken === undefined
          ? await exec(sql.redeemCode, params)
          : await exec(sql.redeemCodeWithRefreshToken, [
              ...params,
              ...refreshTokensTable.params(refreshToken),
            ]);
      if (done.rows.length > 0) return { outcome: 'redeemed' };
      // A repetition that found the code consumed: by us, if our access token is stored. (Told
      // "replayed", the grant would revoke the grant this very call created.)
      if ((uncertain || done.uncertain) && (await some(sql.accessTokenExists, [accessToken.tokenHash])))
        return { outcome: 'redeemed' };
      return notRedeemed(redemption);
    };
    const redemptions = this.#batched<CodeRedemption, RedeemResult>({
      statement: sql.redeemCodes,
      item: ({ codeHash, grant, accessToken, refreshToken, now }) => ({
        code: codeHash,
        now,
        grant: grantsTable.columns.row(grantsTable.params(grant)),
        access: accessTokensTable.columns.row(accessTokensTable.params(accessToken)),
        refresh:
          refreshToken === undefined
            ? null
            : refreshTokensTable.columns.row(refreshTokensTable.params(refreshToken)),
      }),
      key: (redemption) => redemption.accessToken.tokenHash,
      done: { outcome: 'redeemed' },
      notDone: notRedeemed,
      alone: redeemAlone,
    });

    this.codes = {
      async create(code) {
        await exec(sql.createAuthorizationCode, authorizationCodesTable.params(code), 'insert');
      },
      async get(codeHash, now) {
        const row = await first<CodeRow>(sql.getAuthorizationCode, [codeHash, now]);
        return row === undefined ? null : authorizationCodesTable.record(row);
      },
      redeem: (redemption) => redemptions.submit(redemption),
    };

    const rotationParams = (rotation: RefreshRotation) => [
      rotation.tokenHash,
      rotation.now,
      rotation.sealedSuccessor ?? null,
      ...refreshTokensTable.params(rotation.successor),
      ...accessTokensTable.params(rotation.accessToken),
    ];
    // The presented token was not rotated by this rotation. Why is read on facts that never revert
    // (rotated_at is set once, revocation is final), so this second statement cannot contradict
    // the first. `uncertain`: the statement that would have rotated it was lost, then repeated.
    const notRotatedBy = async (rotation: RefreshRotation, uncertain: boolean): Promise<RotateResult> => {
      const row = await first<RefreshTokenRow>(sql.getRefreshToken, [rotation.tokenHash, rotation.now]);
      const result = notRotated(row === undefined ? null : refreshTokensTable.record(row));
      // Rotated to our successor: a first attempt committed and only its answer was lost.
      if (
        uncertain &&
        result.outcome === 'already_rotated' &&
        result.successorHash === rotation.successor.tokenHash
      )
        return { outcome: 'rotated' };
      return result;
    };
    const rotateAlone = async (rotation: RefreshRotation, uncertain: boolean): Promise<RotateResult> => {
      const done = await exec(sql.rotateRefreshToken, rotationParams(rotation));
      if (done.rows.length > 0) return { outcome: 'rotated' };
      return notRotatedBy(rotation, uncertain || done.uncertain);
    };
    const rotations = this.#batched<RefreshRotation, RotateResult>({
      statement: sql.rotateRefreshTokens,
      item: (rotation) => ({
        presented: rotation.tokenHash,
        now: rotation.now,
        sealed: rotation.sealedSuccessor ?? null,
        successor: refreshTokensTable.columns.row(refreshTokensTable.params(rotation.successor)),
        access: accessTokensTable.columns.row(accessTokensTable.params(rotation.accessToken)),
      }),
      key: (rotation) => rotation.successor.tokenHash,
      done: { outcome: 'rotated' },
      notDone: (rotation) => notRotatedBy(rotation, false),
      alone: rotateAlone,
    });

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
      async addAccessToken(token, now) {
        const done = await exec(sql.addAccessToken, [...accessTokensTable.params(token), now], 'insert');
        return done.rows.length > 0 || done.duplicate;
      },
      revokeAccessToken: (tokenHash, now) => some(sql.revokeAccessToken, [tokenHash, now]),
      async getRefreshToken(tokenHash, now) {
        const row = await first<RefreshTokenRow>(sql.getRefreshToken, [tokenHash, now]);
        return row === undefined ? null : refreshTokensTable.record(row);
      },
      rotateRefreshToken: (rotation) => rotations.submit(rotation),
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
        await exec(sql.addSigningKey, signingKeysTable.params(key), 'insert');
      },
      update: (key) => some(sql.updateSigningKey, signingKeysTable.params(key)),
    };

    this.replay = {
      // Never repeated: a repetition after a lost commit would find the key and say "replay",
      // refusing the one caller that did succeed; failing closed is the safe answer.
      checkAndStore: async (key, expiresAt, now) =>
        (await rows(sql.checkAndStoreReplayKey, [key, expiresAt, now], 'never')).length > 0,
    };
  }

  /**
   * The batches of one write step. A batch of one runs the step's own statement; a larger one runs
   * the batch's statement once. A batch refused for one item's values, or rolled back by a
   * conflict, runs each item alone, so only the one at fault fails; a lost one runs each alone,
   * each recognising its own write if the batch had committed; a database down or overloaded fails
   * them all, without a second attempt each.
   */
  #batched<In, Out>(step: BatchedStep<In, Out>): Batcher<In, Out> {
    const together = async (batch: readonly In[]): Promise<readonly BatchOutcome<Out>[]> => {
      let done: Set<string>;
      try {
        const rows = await this.#query<{ key: string }>(step.statement, [
          JSON.stringify(batch.map((input) => step.item(input))),
        ]);
        done = new Set(rows.map((row) => row.key));
      } catch (error) {
        // The database is down or slow: one statement each would only wait as long, each.
        if (error instanceof StorageUnavailableError && !RETRIED_ALONE.has(error.reason)) throw error;
        const uncertain = error instanceof StorageUnavailableError && error.mayHaveApplied;
        return Promise.all(batch.map((input) => settled(step.alone(input, uncertain))));
      }
      return Promise.all(
        batch.map((input) =>
          done.has(step.key(input)) ? { ok: true as const, value: step.done } : settled(step.notDone(input)),
        ),
      );
    };
    return new Batcher<In, Out>(async (batch) =>
      batch.length === 1 && this.#settings.batchAlone !== true
        ? [await settled(step.alone(batch[0] as In, false))]
        : together(batch),
    );
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

  /** Runs one statement once: no repetition (the caller decides what a failure means). */
  async #query<Row>(statement: SqlStatement, params: unknown[]): Promise<Row[]> {
    if (!this.#ready) await this.#prepare();
    return this.#db.query<Row>(statement, params);
  }

  /** Runs one statement, once more after a transient failure when `retry` allows (see {@link Retry}). */
  async #execute<Row>(statement: SqlStatement, params: unknown[], retry: Retry): Promise<Executed<Row>> {
    if (!this.#ready) await this.#prepare();
    return executeWithRetry<Row>(this.#db, statement, params, retry);
  }

  /** See {@link Storage.deleteExpired}: each statement in batches until a batch comes back short. */
  async deleteExpired(now: number): Promise<number> {
    const batch = this.#settings.deleteBatchSize;
    let removed = 0;
    for (const statement of this.#sql.deleteExpired) {
      // One short transaction per batch; a short batch means nothing (unlocked) is left.
      for (;;) {
        const [row] = (
          await this.#execute<{ deleted: number; also?: number }>(statement, [now, batch], 'repeat')
        ).rows;
        const deleted = row?.deleted ?? 0;
        removed += deleted + (row?.also ?? 0);
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
