/**
 * The codes and refresh tokens this server issued most recently, and the pending authorizations
 * whose consent page it showed, by hash, so that the request that presents one needs no read of
 * storage before its atomic step (one round trip fewer per code exchange, per refresh and per
 * consent approval on PostgreSQL, one query fewer on SQLite).
 *
 * What an exchange or a refresh reads first is used for two things. The facts that never change
 * (client, user, grant, scope, resources, redirect URI, PKCE challenge, nonce, DPoP key, auth time)
 * decide the checks and what is minted: for a code or token this server just issued they are the
 * record it wrote. The facts that do change (consumed, rotated, revoked, expired, the grant revoked
 * or ended) are decided again by the atomic step itself (`codes.redeem`, `grants.rotateRefreshToken`),
 * in storage, whatever was read before it: a redemption of a code used meanwhile answers `replayed`,
 * a rotation of a token rotated meanwhile `already_rotated` with the facts, and either of something
 * no longer active `invalid`; the grants treat these as they treat a concurrent request. A pending
 * authorization's request never changes; its binding (user, session, the consent form's CSRF hash)
 * is checked against the remembered record and again by `interactions.complete`, which completes
 * only a record still bound so: showing the consent page again on another instance rebinds it, and
 * the older form is refused. So a remembered record can be stale only in what storage checks anyway.
 *
 * A record is handed out once (`take`): presenting the code or token again reads storage, as does
 * every use of one another instance issued. At most {@link RECENTLY_ISSUED_MAX_ENTRIES} are kept per
 * kind, the oldest dropped first; nothing survives a restart.
 * @module
 */

/** Records kept at most per kind (a few hundred bytes each). */
export const RECENTLY_ISSUED_MAX_ENTRIES = 10_000;

/** The records of what this server issued and nobody presented yet, by hash. */
export class RecentlyIssued<T extends { readonly expiresAt: number }> {
  readonly #records = new Map<string, T>();
  readonly #maxEntries: number;

  constructor(maxEntries = RECENTLY_ISSUED_MAX_ENTRIES) {
    this.#maxEntries = maxEntries;
  }

  /** Keeps the record stored under `hash` (after the commit that stored it). */
  remember(hash: string, record: T): void {
    if (this.#records.size >= this.#maxEntries) {
      this.#records.delete(this.#records.keys().next().value as string);
    }
    this.#records.set(hash, record);
  }

  /** The record of `hash`, once, while it has not expired at `now`; `undefined` otherwise. */
  take(hash: string, now: number): T | undefined {
    const record = this.#records.get(hash);
    if (record === undefined) return undefined;
    this.#records.delete(hash);
    return record.expiresAt > now ? record : undefined;
  }

  /** How many records are kept (for tests). */
  get size(): number {
    return this.#records.size;
  }
}
