/**
 * The storage contract, by aggregate. Every adapter (memory, embedded PGlite, PostgreSQL,
 * third-party) implements {@link Storage} and passes the conformance kit of `portcullis/testing`.
 *
 * Conventions for every method:
 * - **Time** is epoch **seconds** (integers). Methods that depend on time take `now` from the
 *   server's clock instead of reading their own, so tests and several instances agree.
 * - **Secrets are never stored in the clear.** Codes, tokens, pending-authorization ids and client
 *   secrets reach storage only as base64url SHA-256 digests (`*Hash` fields); an access or refresh
 *   token's key starts with the time it was made, so that new keys sort last ({@link tokenKey}).
 * - **Null versus throw.** A lookup that finds nothing (or finds something expired) returns `null`;
 *   a write that finds nothing to act on returns `false`. Methods throw only on infrastructure
 *   failure (connection lost, constraint violated by a caller bug). Throw (or let through) a
 *   `StorageUnavailableError` for a transient one (the database is down, restarting or overloaded):
 *   the server answers it `503 temporarily_unavailable` with `Retry-After`, anything else
 *   `500 server_error`. A throw from an atomic step means it did not happen, as far as the adapter
 *   knows: an adapter that lost the answer of a commit finds out whether it happened before
 *   throwing (the SQL storage retries once and recognises its own writes).
 * - **Records are immutable values.** Adapters return copies or frozen objects; callers never
 *   mutate what they get. Optional fields are absent, never `undefined`.
 * - **Facts, not policy.** The atomic steps report what they found (consumed, rotated at, with
 *   which successor); what that means (a replay, a retry within the grace window, a reuse) is
 *   decided by the grants, which revoke explicitly.
 * - **Atomic steps** are marked ATOMIC: under any concurrency (across processes for shared
 *   adapters) the step happens exactly once, and all of its writes happen or none does.
 * @module
 */
import type { ClientStore } from './clients.js';
import type { CodeStore } from './codes.js';
import type { ConsentStore } from './consents.js';
import type { GrantStore } from './grants.js';
import type { InteractionStore } from './interactions.js';
import type { SigningKeyStore } from './keys.js';
import type { ReplayStore } from './replay.js';

/**
 * The storage interface: one store per aggregate, plus housekeeping. See the module
 * documentation for the conventions every method follows, and `runStorageConformance` in
 * `portcullis/testing` for the executable version of this contract. The atomic steps are
 * {@link InteractionStore.consume}, {@link InteractionStore.complete}, {@link CodeStore.redeem},
 * {@link GrantStore.rotateRefreshToken} and {@link ReplayStore.checkAndStore}. docs/storage.md walks through an adapter.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, type Storage } from 'portcullis';
 * import { postgresStorage } from 'portcullis/postgres';
 *
 * const storage: Storage = postgresStorage({ connectionString: process.env.DATABASE_URL ?? '' });
 * const oauth = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
 * // Housekeeping by hand, e.g. from a scheduled job with housekeepingIntervalSeconds: 0.
 * await storage.deleteExpired(Math.floor(Date.now() / 1000));
 * ```
 * @see RFC 6749 §4.1.2, §10.5 (single-use codes); RFC 9700 §4.14.2 (refresh rotation); RFC 7009 §2.1
 * @group Storage
 * @category Contract
 */
export interface Storage {
  /** Registered clients. */
  readonly clients: ClientStore;
  /** Pending authorizations, waiting for login and consent. */
  readonly interactions: InteractionStore;
  /** Authorization codes and their tombstones; redeeming one creates its grant. */
  readonly codes: CodeStore;
  /** Grants with their access and refresh tokens. */
  readonly grants: GrantStore;
  /** Remembered consents. */
  readonly consents: ConsentStore;
  /** Signing keys. */
  readonly keys: SigningKeyStore;
  /**
   * One-time values (client assertion and DPoP proof `jti`s), each accepted once across every
   * instance that shares this storage. {@link ReplayStore.checkAndStore} is ATOMIC.
   */
  readonly replay: ReplayStore;
  /**
   * Deletes what has expired by `now`: pending authorizations; codes past their tombstone time
   * (`expiresAt + CODE_TOMBSTONE_SECONDS`); access and refresh tokens past `expiresAt` (rotated
   * refresh tokens included: kept until then, so that their reuse is still detected); grants past
   * their absolute expiry, grants left without any token whose `expiresAt > now` (nothing can use
   * them any more), and revoked grants `CODE_TOMBSTONE_SECONDS` after revocation (with their
   * remaining tokens); unused clients past `expiresAt`; keys past `expiresAt`; replay keys past
   * `expiresAt`. Must not block
   * concurrent requests for long (adapters delete in batches). Returns the number of records
   * removed.
   */
  deleteExpired(now: number): Promise<number>;
  /** Releases connections and timers. Idempotent. */
  close(): Promise<void>;
}
