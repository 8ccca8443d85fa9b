/**
 * In-memory storage: the reference implementation of {@link Storage}, for tests and development.
 * Every method finishes its read-check-write without an `await` in between, which makes each step
 * atomic in a single JavaScript process. Data is lost when the process exits.
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
} from './types.js';

/** A revoked placeholder left by `revokeGrant` for a grant id that does not exist yet. */
interface GrantEntry {
  record: GrantRecord | null;
  revokedAt: number | undefined;
  accessTokens: Set<string>;
  refreshTokens: Set<string>;
}

/** Consumed codes stay this long past their expiry so late replays are still recognised. */
const CODE_TOMBSTONE_SECONDS = 600;

/**
 * Creates an in-memory {@link Storage}: for tests and for trying things. Everything is lost when
 * the process exits (signing keys included, so tokens issued before stop verifying), and nothing is
 * shared with another process. Its atomic steps hold within the process; it passes the
 * conformance kit.
 *
 * @returns a storage whose data lives as long as the process
 * @see docs/storage.md; RFC 6749 §4.1.2 and §10.5 (single-use codes), RFC 9700 §4.14.2 (refresh
 * rotation): the atomic steps it implements
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * const server = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * ```
 * @group Storage
 * @category Contract
 */
export function memoryStorage(): Storage {
  const clients = new Map<string, ClientRecord>();
  const pending = new Map<string, PendingAuthorizationRecord>();
  const codes = new Map<string, AuthorizationCodeRecord>();
  const grants = new Map<string, GrantEntry>();
  const accessTokens = new Map<string, AccessTokenRecord>();
  const refreshTokens = new Map<string, RefreshTokenRecord>();
  const consents = new Map<string, ConsentRecord>();
  const keys = new Map<string, SigningKeyRecord>();
  const grantsByUser = new Map<string, Set<string>>();

  const consentKey = (userId: string, clientId: string) => `${userId.length}:${userId}${clientId}`;

  function grantEntry(grantId: string): GrantEntry {
    let entry = grants.get(grantId);
    if (entry === undefined) {
      entry = { record: null, revokedAt: undefined, accessTokens: new Set(), refreshTokens: new Set() };
      grants.set(grantId, entry);
    }
    return entry;
  }

  function grantActive(grantId: string, now: number): boolean {
    const entry = grants.get(grantId);
    return (
      entry !== undefined &&
      entry.record !== null &&
      entry.revokedAt === undefined &&
      entry.record.expiresAt > now
    );
  }

  function revokeEntry(entry: GrantEntry, now: number): void {
    entry.revokedAt = now;
    if (entry.record !== null) entry.record = { ...entry.record, revokedAt: now };
    for (const hash of entry.accessTokens) {
      const token = accessTokens.get(hash);
      if (token !== undefined && token.revokedAt === undefined)
        accessTokens.set(hash, { ...token, revokedAt: now });
    }
    for (const hash of entry.refreshTokens) {
      const token = refreshTokens.get(hash);
      if (token !== undefined && token.revokedAt === undefined)
        refreshTokens.set(hash, { ...token, revokedAt: now });
    }
  }

  function insertAccessToken(token: AccessTokenRecord): void {
    accessTokens.set(token.tokenHash, token);
    grantEntry(token.grantId).accessTokens.add(token.tokenHash);
  }

  function insertRefreshToken(token: RefreshTokenRecord): void {
    refreshTokens.set(token.tokenHash, token);
    grantEntry(token.grantId).refreshTokens.add(token.tokenHash);
  }

  function deleteGrant(grantId: string, entry: GrantEntry): void {
    for (const hash of entry.accessTokens) accessTokens.delete(hash);
    for (const hash of entry.refreshTokens) refreshTokens.delete(hash);
    grants.delete(grantId);
    if (entry.record !== null) grantsByUser.get(entry.record.userId)?.delete(grantId);
  }

  return {
    async createClient(client) {
      if (clients.has(client.clientId)) throw new Error(`client ${client.clientId} already exists`);
      clients.set(client.clientId, client);
    },
    async getClient(clientId, now) {
      const client = clients.get(clientId);
      if (client === undefined) return null;
      if (client.expiresAt !== undefined && client.expiresAt <= now) return null;
      return client;
    },
    async updateClient(client) {
      if (!clients.has(client.clientId)) return false;
      clients.set(client.clientId, client);
      return true;
    },
    async deleteClient(clientId, now) {
      if (!clients.delete(clientId)) return false;
      for (const [key, consent] of consents) if (consent.clientId === clientId) consents.delete(key);
      for (const entry of grants.values()) {
        if (entry.record?.clientId === clientId && entry.revokedAt === undefined) revokeEntry(entry, now);
      }
      return true;
    },

    async createPendingAuthorization(record) {
      pending.set(record.idHash, record);
    },
    async getPendingAuthorization(idHash, now) {
      const record = pending.get(idHash);
      if (record === undefined || record.expiresAt <= now) return null;
      return record;
    },
    async bindPendingAuthorization(idHash, binding, now) {
      const record = pending.get(idHash);
      if (record === undefined || record.expiresAt <= now) return false;
      if (record.userId !== undefined && record.userId !== binding.userId) return false;
      const next: PendingAuthorizationRecord = {
        ...record,
        userId: binding.userId,
        csrfHash: binding.csrfHash,
        ...(binding.sessionId === undefined ? {} : { sessionId: binding.sessionId }),
      };
      pending.set(idHash, next);
      return true;
    },
    async consumePendingAuthorization(idHash, now) {
      const record = pending.get(idHash);
      if (record === undefined) return null;
      pending.delete(idHash);
      return record.expiresAt <= now ? null : record;
    },

    async createAuthorizationCode(code) {
      codes.set(code.codeHash, code);
    },
    async getAuthorizationCode(codeHash, now) {
      const code = codes.get(codeHash);
      if (code === undefined || code.expiresAt <= now) return null;
      return code;
    },
    async consumeAuthorizationCode(codeHash, now): Promise<ConsumeCodeResult | null> {
      const code = codes.get(codeHash);
      if (code === undefined || code.expiresAt <= now) return null;
      if (code.consumedAt !== undefined) return { outcome: 'replayed', code };
      const consumed = { ...code, consumedAt: now };
      codes.set(codeHash, consumed);
      return { outcome: 'consumed', code: consumed };
    },

    async createGrant({ grant, accessToken, refreshToken }: GrantIssuance) {
      if (grants.has(grant.grantId)) return false;
      grants.set(grant.grantId, {
        record: grant,
        revokedAt: grant.revokedAt,
        accessTokens: new Set(),
        refreshTokens: new Set(),
      });
      let byUser = grantsByUser.get(grant.userId);
      if (byUser === undefined) {
        byUser = new Set();
        grantsByUser.set(grant.userId, byUser);
      }
      byUser.add(grant.grantId);
      insertAccessToken(accessToken);
      if (refreshToken !== undefined) insertRefreshToken(refreshToken);
      return true;
    },
    async getGrant(grantId) {
      return grants.get(grantId)?.record ?? null;
    },
    async listGrantsByUser(userId, now) {
      const out: GrantRecord[] = [];
      for (const grantId of grantsByUser.get(userId) ?? []) {
        const entry = grants.get(grantId);
        if (entry?.record && entry.revokedAt === undefined && entry.record.expiresAt > now)
          out.push(entry.record);
      }
      return out.sort((a, b) => b.createdAt - a.createdAt || (a.grantId < b.grantId ? -1 : 1));
    },
    async revokeGrant(grantId, now) {
      const entry = grantEntry(grantId);
      if (entry.revokedAt !== undefined) return false;
      revokeEntry(entry, now);
      return entry.record !== null;
    },

    async createAccessToken(token) {
      insertAccessToken(token);
    },
    async getAccessToken(tokenHash, now) {
      const token = accessTokens.get(tokenHash);
      if (token === undefined || token.revokedAt !== undefined || token.expiresAt <= now) return null;
      const entry = grants.get(token.grantId);
      if (entry === undefined || entry.revokedAt !== undefined) return null;
      return token;
    },
    async revokeAccessToken(tokenHash, now) {
      const token = accessTokens.get(tokenHash);
      if (token === undefined || token.revokedAt !== undefined) return false;
      accessTokens.set(tokenHash, { ...token, revokedAt: now });
      return true;
    },

    async getRefreshToken(tokenHash, now) {
      const token = refreshTokens.get(tokenHash);
      if (token === undefined || token.revokedAt !== undefined || token.expiresAt <= now) return null;
      if (!grantActive(token.grantId, now)) return null;
      return token;
    },
    async rotateRefreshToken(oldHash, next: RotationInput, now, graceSeconds): Promise<RotateResult> {
      const old = refreshTokens.get(oldHash);
      if (old === undefined || old.revokedAt !== undefined || old.expiresAt <= now)
        return { outcome: 'invalid' };
      if (!grantActive(old.grantId, now)) return { outcome: 'invalid' };
      if (old.rotatedAt !== undefined) {
        if (graceSeconds > 0 && now - old.rotatedAt < graceSeconds)
          return { outcome: 'grace', previous: old };
        revokeEntry(grantEntry(old.grantId), now);
        return { outcome: 'reused', grantId: old.grantId };
      }
      refreshTokens.set(oldHash, {
        ...old,
        rotatedAt: now,
        successorHash: next.refreshToken.tokenHash,
        ...(next.sealedSuccessor === undefined ? {} : { sealedSuccessor: next.sealedSuccessor }),
      });
      insertRefreshToken(next.refreshToken);
      insertAccessToken(next.accessToken);
      return { outcome: 'rotated' };
    },

    async getConsent(userId, clientId) {
      return consents.get(consentKey(userId, clientId)) ?? null;
    },
    async saveConsent(consent) {
      consents.set(consentKey(consent.userId, consent.clientId), consent);
    },
    async deleteConsent(userId, clientId) {
      return consents.delete(consentKey(userId, clientId));
    },

    async listSigningKeys() {
      return [...keys.values()];
    },
    async addSigningKey(key) {
      if (keys.has(key.kid)) throw new Error(`signing key ${key.kid} already exists`);
      keys.set(key.kid, key);
    },
    async updateSigningKey(key) {
      if (!keys.has(key.kid)) return false;
      keys.set(key.kid, key);
      return true;
    },

    async deleteExpired(now) {
      let removed = 0;
      for (const [id, client] of clients) {
        if (client.expiresAt !== undefined && client.expiresAt <= now) {
          clients.delete(id);
          removed++;
        }
      }
      for (const [hash, record] of pending) {
        if (record.expiresAt <= now) {
          pending.delete(hash);
          removed++;
        }
      }
      for (const [hash, code] of codes) {
        if (code.expiresAt + CODE_TOMBSTONE_SECONDS <= now) {
          codes.delete(hash);
          removed++;
        }
      }
      for (const [hash, token] of accessTokens) {
        if (token.expiresAt <= now) {
          accessTokens.delete(hash);
          grants.get(token.grantId)?.accessTokens.delete(hash);
          removed++;
        }
      }
      for (const [hash, token] of refreshTokens) {
        if (token.expiresAt <= now) {
          refreshTokens.delete(hash);
          grants.get(token.grantId)?.refreshTokens.delete(hash);
          removed++;
        }
      }
      for (const [grantId, entry] of grants) {
        const expired = entry.record !== null && entry.record.expiresAt <= now;
        const revokedLongAgo =
          entry.revokedAt !== undefined &&
          entry.accessTokens.size === 0 &&
          entry.refreshTokens.size === 0 &&
          entry.revokedAt + CODE_TOMBSTONE_SECONDS <= now;
        if (expired || revokedLongAgo) {
          deleteGrant(grantId, entry);
          removed++;
        }
      }
      for (const [kid, key] of keys) {
        if (key.expiresAt !== undefined && key.expiresAt <= now) {
          keys.delete(kid);
          removed++;
        }
      }
      return removed;
    },
    async close() {},
  };
}
