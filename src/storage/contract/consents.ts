/**
 * The consents aggregate: what a user has already allowed a client, so that the consent page is
 * shown again only when a request asks for more.
 * @module
 */

/**
 * A remembered consent: the scopes a user has already allowed a client.
 *
 * @example
 * ```ts
 * import type { Storage } from 'portcullis';
 *
 * declare const storage: Storage;
 * const consent = await storage.consents.get('user-42', 'x7Gd9...');
 * console.log(consent?.scope); // ['openid', 'courses:read']
 * ```
 * @see RFC 6749 §10.2, RFC 8252 §8.6
 * @group Storage
 * @category Records
 */
export interface ConsentRecord {
  readonly userId: string;
  readonly clientId: string;
  readonly scope: readonly string[];
  readonly resources: readonly string[];
  /** Epoch seconds. */
  readonly createdAt: number;
  /** Epoch seconds. */
  readonly updatedAt: number;
}

/**
 * Remembered consents, one per `(userId, clientId)`.
 *
 * @example
 * ```ts
 * import type { ConsentStore } from 'portcullis';
 *
 * declare const consents: ConsentStore;
 * const now = Math.floor(Date.now() / 1000);
 * await consents.save({ userId: 'user-42', clientId: 'x7Gd9...', scope: ['openid'], resources: [], createdAt: now, updatedAt: now });
 * ```
 * @see RFC 6749 §10.2
 * @group Storage
 * @category Contract
 */
export interface ConsentStore {
  /** The remembered consent of a user for a client, or `null`. */
  get(userId: string, clientId: string): Promise<ConsentRecord | null>;
  /** Creates or replaces the consent of `(userId, clientId)`. */
  save(consent: ConsentRecord): Promise<void>;
  /** Forgets a consent. Returns false when there was none. */
  delete(userId: string, clientId: string): Promise<boolean>;
}
