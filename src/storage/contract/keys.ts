/**
 * The signing keys aggregate: key pairs kept in storage so that every instance signs with, and
 * publishes, the same keys.
 * @module
 */

/**
 * A signing key pair. Stored so that every instance signs with, and publishes, the same keys.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * const now = Math.floor(Date.now() / 1000);
 * const published = (await storage.keys.list()).filter((k) => k.expiresAt === undefined || k.expiresAt > now);
 * console.log(published.map((k) => `${k.kid} ${k.alg}`));
 * ```
 * @see RFC 7517 (JWK), RFC 7515 §4.1.4 (`kid`)
 * @group Storage
 * @category Records
 */
export interface SigningKeyRecord {
  readonly kid: string;
  readonly alg: string;
  /** The private key as a JSON Web Key, serialised. Protect the storage that holds it. */
  readonly privateJwk: string;
  /** Epoch seconds. */
  readonly createdAt: number;
  /** From this time (epoch seconds) the key may sign. Before it, the key is only published. */
  readonly activatesAt: number;
  /** From this time the key no longer signs but stays published until `expiresAt`. */
  readonly retiresAt?: number;
  /** After this time the key is neither published nor trusted, and may be deleted. */
  readonly expiresAt?: number;
}

/**
 * Signing keys. A handful of records, read in full by every instance now and then.
 *
 * @example
 * ```ts
 * import type { SigningKeyStore } from 'portcullis';
 *
 * declare const keys: SigningKeyStore;
 * const now = Math.floor(Date.now() / 1000);
 * for (const key of await keys.list()) {
 *   if (key.retiresAt === undefined) await keys.update({ ...key, retiresAt: now, expiresAt: now + 3900 });
 * }
 * ```
 * @see RFC 7517, RFC 7515 §4.1.4
 * @group Storage
 * @category Contract
 */
export interface SigningKeyStore {
  /** Every stored key, expired ones included, in creation order (`createdAt`, then insertion). */
  list(): Promise<SigningKeyRecord[]>;
  /**
   * Stores a new key.
   * @throws when `kid` already exists
   */
  add(key: SigningKeyRecord): Promise<void>;
  /** Replaces a key record (to set `retiresAt` / `expiresAt`). Returns false when unknown. */
  update(key: SigningKeyRecord): Promise<boolean>;
}
