/**
 * The refresh tokens this server issued most recently, by hash, so that the refresh presenting one
 * needs no read of storage before its atomic rotation (one round trip fewer per refresh on
 * PostgreSQL, one query fewer on SQLite).
 *
 * What a refresh reads first is used for two things. The facts that never change (client, user,
 * grant, scope, resources, DPoP key, auth time) decide the checks and what is minted: for a token
 * this server just issued they are the record it wrote. The facts that do change (rotated, revoked,
 * expired, the grant revoked or ended) are decided again by the rotation itself, atomically in
 * storage, whatever was read before it: a rotation of a token that is no longer active answers
 * `invalid`, and of one rotated meanwhile (here or by another instance) `already_rotated` with the
 * facts, which the grant treats as it treats a concurrent refresh (the grace window, or reuse). So a
 * remembered record can be stale only in what storage checks anyway.
 *
 * A record is handed out once (`take`): presenting the token again reads storage, as does every
 * refresh of a token another instance issued. At most {@link RECENT_REFRESH_TOKENS_MAX_ENTRIES} are
 * kept, the oldest dropped first; nothing survives a restart.
 * @module
 */
import type { RefreshTokenRecord } from '../storage/types.js';

/** Records kept at most (a few hundred bytes each). */
export const RECENT_REFRESH_TOKENS_MAX_ENTRIES = 10_000;

/** The records of the refresh tokens this server issued and nobody presented yet. */
export class RecentRefreshTokens {
  readonly #records = new Map<string, RefreshTokenRecord>();
  readonly #maxEntries: number;

  constructor(maxEntries = RECENT_REFRESH_TOKENS_MAX_ENTRIES) {
    this.#maxEntries = maxEntries;
  }

  /** Keeps the record of a token just stored (after the commit that stored it). */
  remember(record: RefreshTokenRecord): void {
    if (this.#records.size >= this.#maxEntries) {
      this.#records.delete(this.#records.keys().next().value as string);
    }
    this.#records.set(record.tokenHash, record);
  }

  /** The record of `tokenHash`, once, while it has not expired at `now`; `undefined` otherwise. */
  take(tokenHash: string, now: number): RefreshTokenRecord | undefined {
    const record = this.#records.get(tokenHash);
    if (record === undefined) return undefined;
    this.#records.delete(tokenHash);
    return record.expiresAt > now ? record : undefined;
  }

  /** How many records are kept (for tests). */
  get size(): number {
    return this.#records.size;
  }
}
