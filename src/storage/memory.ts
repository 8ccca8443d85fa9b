/**
 * In-memory storage: the reference implementation of {@link Storage}, for tests and development.
 * Every method finishes its read-check-write without an `await` in between, which makes each step
 * atomic in a single JavaScript process. Data is lost when the process exits.
 * @module
 */

import { isBoundTo } from './binding.js';
import { notRotated } from './rotation.js';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ClientRecord,
  ConsentRecord,
  GrantRecord,
  PendingAuthorizationRecord,
  RefreshTokenRecord,
  SigningKeyRecord,
  Storage,
} from './types.js';
import { CODE_TOMBSTONE_SECONDS } from './types.js';

/** A grant with the hashes of the tokens it issued. */
interface GrantEntry {
  record: GrantRecord;
  readonly accessTokens: Set<string>;
  readonly refreshTokens: Set<string>;
}

/** Removes every entry of `map` that `expired` says has expired; returns how many. */
function sweep<K, V>(map: Map<K, V>, expired: (value: V) => boolean, onDelete?: (value: V) => void): number {
  let removed = 0;
  for (const [key, value] of map) {
    if (!expired(value)) continue;
    map.delete(key);
    onDelete?.(value);
    removed++;
  }
  return removed;
}

/** Every storage {@link memoryStorage} made: the start-up warning about production reads it. */
const memoryStorages = new WeakSet<Storage>();

/** True when `storage` came from {@link memoryStorage} (it forgets everything on restart). */
export function isMemoryStorage(storage: Storage): boolean {
  return memoryStorages.has(storage);
}

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
  const replayKeys = new Map<string, { readonly expiresAt: number }>();
  const grantsByUser = new Map<string, Set<string>>();

  const consentKey = (userId: string, clientId: string) => `${userId.length}:${userId}${clientId}`;

  /** The grant of an id when it is neither revoked nor past its absolute expiry. */
  function activeGrant(grantId: string, now: number): GrantEntry | undefined {
    const entry = grants.get(grantId);
    if (entry === undefined || entry.record.revokedAt !== undefined || entry.record.expiresAt <= now) {
      return undefined;
    }
    return entry;
  }

  function revokeEntry(entry: GrantEntry, now: number): void {
    entry.record = { ...entry.record, revokedAt: now };
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

  function insertAccessToken(entry: GrantEntry, token: AccessTokenRecord): void {
    accessTokens.set(token.tokenHash, token);
    entry.accessTokens.add(token.tokenHash);
  }

  function insertRefreshToken(entry: GrantEntry, token: RefreshTokenRecord): void {
    refreshTokens.set(token.tokenHash, token);
    entry.refreshTokens.add(token.tokenHash);
  }

  function deleteGrant(entry: GrantEntry): void {
    for (const hash of entry.accessTokens) accessTokens.delete(hash);
    for (const hash of entry.refreshTokens) refreshTokens.delete(hash);
    grants.delete(entry.record.grantId);
    grantsByUser.get(entry.record.userId)?.delete(entry.record.grantId);
  }

  const storage: Storage = {
    clients: {
      async create(client) {
        if (clients.has(client.clientId)) throw new Error(`client ${client.clientId} already exists`);
        clients.set(client.clientId, client);
      },
      async get(clientId, now) {
        const client = clients.get(clientId);
        if (client === undefined || (client.expiresAt !== undefined && client.expiresAt <= now)) return null;
        return client;
      },
      async clearExpiry(clientId) {
        const client = clients.get(clientId);
        if (client === undefined) return false;
        const { expiresAt: _cleared, ...kept } = client;
        clients.set(clientId, kept);
        return true;
      },
      async delete(clientId, now) {
        if (!clients.delete(clientId)) return false;
        for (const [key, consent] of consents) if (consent.clientId === clientId) consents.delete(key);
        for (const entry of grants.values()) {
          if (entry.record.clientId === clientId && entry.record.revokedAt === undefined)
            revokeEntry(entry, now);
        }
        return true;
      },
    },

    interactions: {
      async create(record) {
        pending.set(record.idHash, record);
      },
      async get(idHash, now) {
        const record = pending.get(idHash);
        return record === undefined || record.expiresAt <= now ? null : record;
      },
      async bind(idHash, binding, now) {
        const record = pending.get(idHash);
        if (record === undefined || record.expiresAt <= now) return false;
        if (record.userId !== undefined && record.userId !== binding.userId) return false;
        pending.set(idHash, {
          ...record,
          userId: binding.userId,
          csrfHash: binding.csrfHash,
          ...(binding.sessionId === undefined ? {} : { sessionId: binding.sessionId }),
        });
        return true;
      },
      async consume(idHash, now) {
        const record = pending.get(idHash);
        if (record === undefined) return null;
        pending.delete(idHash);
        return record.expiresAt <= now ? null : record;
      },
      async complete({ idHash, code, consent, boundTo, now }) {
        const record = pending.get(idHash);
        if (record === undefined || record.expiresAt <= now) return false;
        if (boundTo !== undefined && !isBoundTo(record, boundTo)) return false;
        if (codes.has(code.codeHash)) throw new Error(`code ${code.codeHash} already exists`);
        pending.delete(idHash);
        codes.set(code.codeHash, code);
        if (consent !== undefined) {
          const key = consentKey(consent.userId, consent.clientId);
          const previous = consents.get(key);
          consents.set(
            key,
            previous === undefined
              ? consent
              : {
                  ...previous,
                  scope: [...new Set([...previous.scope, ...consent.scope])],
                  resources: [...new Set([...previous.resources, ...consent.resources])],
                  updatedAt: consent.updatedAt,
                },
          );
        }
        return true;
      },
    },

    codes: {
      async create(code) {
        codes.set(code.codeHash, code);
      },
      async get(codeHash, now) {
        const code = codes.get(codeHash);
        if (code === undefined) return null;
        const until =
          code.consumedAt === undefined ? code.expiresAt : code.expiresAt + CODE_TOMBSTONE_SECONDS;
        return until > now ? code : null;
      },
      async redeem({ codeHash, grant, accessToken, refreshToken, now }) {
        const code = codes.get(codeHash);
        if (code === undefined) return { outcome: 'invalid' };
        if (code.consumedAt !== undefined) {
          if (code.expiresAt + CODE_TOMBSTONE_SECONDS <= now) return { outcome: 'invalid' };
          return { outcome: 'replayed', grantId: code.grantId, consumedAt: code.consumedAt };
        }
        if (code.expiresAt <= now || grant.grantId !== code.grantId) return { outcome: 'invalid' };
        if (grants.has(grant.grantId)) throw new Error(`grant ${grant.grantId} already exists`);
        codes.set(codeHash, { ...code, consumedAt: now });
        const entry: GrantEntry = { record: grant, accessTokens: new Set(), refreshTokens: new Set() };
        grants.set(grant.grantId, entry);
        const byUser = grantsByUser.get(grant.userId) ?? new Set<string>();
        grantsByUser.set(grant.userId, byUser.add(grant.grantId));
        insertAccessToken(entry, accessToken);
        if (refreshToken !== undefined) insertRefreshToken(entry, refreshToken);
        return { outcome: 'redeemed' };
      },
    },

    grants: {
      async get(grantId) {
        return grants.get(grantId)?.record ?? null;
      },
      async listByUser(userId, now) {
        const out: GrantRecord[] = [];
        for (const grantId of grantsByUser.get(userId) ?? []) {
          const entry = activeGrant(grantId, now);
          if (entry !== undefined) out.push(entry.record);
        }
        return out.sort((a, b) => b.createdAt - a.createdAt || (a.grantId < b.grantId ? -1 : 1));
      },
      async revoke(grantId, now) {
        const entry = grants.get(grantId);
        if (entry === undefined || entry.record.revokedAt !== undefined) return false;
        revokeEntry(entry, now);
        return true;
      },
      async getAccessToken(tokenHash, now) {
        const token = accessTokens.get(tokenHash);
        if (token === undefined || token.revokedAt !== undefined || token.expiresAt <= now) return null;
        const entry = grants.get(token.grantId);
        return entry === undefined || entry.record.revokedAt !== undefined ? null : token;
      },
      async addAccessToken(token, now) {
        const entry = activeGrant(token.grantId, now);
        if (entry === undefined) return false;
        insertAccessToken(entry, token);
        return true;
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
        return activeGrant(token.grantId, now) === undefined ? null : token;
      },
      async rotateRefreshToken({ tokenHash, successor, accessToken, sealedSuccessor, now }) {
        const old = refreshTokens.get(tokenHash);
        if (old === undefined || old.revokedAt !== undefined || old.expiresAt <= now)
          return { outcome: 'invalid' };
        const entry = activeGrant(old.grantId, now);
        if (entry === undefined) return { outcome: 'invalid' };
        if (old.rotatedAt !== undefined) return notRotated(old);
        refreshTokens.set(tokenHash, {
          ...old,
          rotatedAt: now,
          successorHash: successor.tokenHash,
          ...(sealedSuccessor === undefined ? {} : { sealedSuccessor }),
        });
        insertRefreshToken(entry, successor);
        insertAccessToken(entry, accessToken);
        return { outcome: 'rotated' };
      },
    },

    consents: {
      async get(userId, clientId) {
        return consents.get(consentKey(userId, clientId)) ?? null;
      },
      async save(consent) {
        consents.set(consentKey(consent.userId, consent.clientId), consent);
      },
      async delete(userId, clientId) {
        return consents.delete(consentKey(userId, clientId));
      },
    },

    keys: {
      async list() {
        return [...keys.values()];
      },
      async add(key) {
        if (keys.has(key.kid)) throw new Error(`signing key ${key.kid} already exists`);
        keys.set(key.kid, key);
      },
      async update(key) {
        if (!keys.has(key.kid)) return false;
        keys.set(key.kid, key);
        return true;
      },
    },

    replay: {
      // Synchronous between awaits: the check and the write are one step.
      async checkAndStore(key, expiresAt, now) {
        const seen = replayKeys.get(key);
        if (seen !== undefined && seen.expiresAt > now) return false;
        replayKeys.set(key, { expiresAt });
        return true;
      },
    },

    async deleteExpired(now) {
      const expired = (record: { readonly expiresAt?: number }) =>
        record.expiresAt !== undefined && record.expiresAt <= now;
      let removed = sweep(clients, expired) + sweep(pending, expired);
      removed += sweep(codes, (code) => code.expiresAt + CODE_TOMBSTONE_SECONDS <= now);
      removed += sweep(accessTokens, expired, (t) => grants.get(t.grantId)?.accessTokens.delete(t.tokenHash));
      removed += sweep(refreshTokens, expired, (t) =>
        grants.get(t.grantId)?.refreshTokens.delete(t.tokenHash),
      );
      for (const entry of grants.values()) {
        const { expiresAt, revokedAt } = entry.record;
        // Past its expiry, revoked a while ago, or left without any unexpired token.
        const emptied = entry.accessTokens.size === 0 && entry.refreshTokens.size === 0;
        if (
          emptied ||
          expiresAt <= now ||
          (revokedAt !== undefined && revokedAt + CODE_TOMBSTONE_SECONDS <= now)
        ) {
          removed += 1 + entry.accessTokens.size + entry.refreshTokens.size;
          deleteGrant(entry);
        }
      }
      return removed + sweep(keys, expired) + sweep(replayKeys, expired);
    },
    async close() {},
  };
  memoryStorages.add(storage);
  return storage;
}
