/**
 * Signing keys: loaded from options or from storage (generated on first start); rotation is in
 * `rotation.ts`.
 * A new key signs at once; retired keys stay in the JWKS until every token they signed has expired.
 * Keys live in storage so that every instance signs with, and publishes, the same set.
 * @module
 */
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
} from 'jose';
import { nowSeconds, type Runtime } from '../core/context.js';
import type { SigningKeyRecord, Storage } from '../storage/types.js';
import { createJwsSigner, type JwsSigner } from '../tokens/jws.js';

/** Algorithms this library signs with. */
export type SigningAlg = 'RS256' | 'ES256';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** A key ready to use. */
export interface LoadedKey {
  readonly kid: string;
  readonly alg: SigningAlg;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly publicJwk: JWK;
  /** Signs a JWS signing input (synchronously with node:crypto where it signs correctly). */
  readonly sign: JwsSigner;
  readonly activatesAt: number;
  readonly retiresAt: number | undefined;
  readonly expiresAt: number | undefined;
}

/** Options of the key store. */
export interface KeyStoreOptions {
  readonly algs: readonly SigningAlg[];
  readonly privateJwks: readonly Readonly<Record<string, unknown>>[] | undefined;
  readonly refreshIntervalSeconds: number;
  /** How long a retired key stays published: the longest lifetime of anything it signed. */
  readonly retentionSeconds: number;
}

/** Strips the private members of a JWK. */
export function publicJwkOf(jwk: JWK): JWK {
  const out: Record<string, unknown> = { ...jwk };
  for (const member of PRIVATE_MEMBERS) delete out[member];
  delete out.key_ops;
  delete out.ext;
  return out as JWK;
}

async function loadKey(
  jwk: JWK,
  meta: {
    kid?: string | undefined;
    alg: SigningAlg;
    activatesAt: number;
    retiresAt?: number | undefined;
    expiresAt?: number | undefined;
  },
): Promise<LoadedKey> {
  const kid = meta.kid ?? jwk.kid ?? (await calculateJwkThumbprint(jwk));
  const publicJwk: JWK = { ...publicJwkOf(jwk), kid, alg: meta.alg, use: 'sig' };
  const [privateKey, publicKey] = await Promise.all([
    importJWK(jwk, meta.alg),
    importJWK(publicJwk, meta.alg),
  ]);
  return {
    kid,
    alg: meta.alg,
    privateKey: privateKey as CryptoKey,
    publicKey: publicKey as CryptoKey,
    publicJwk,
    sign: (
      await createJwsSigner(meta.alg, jwk as Record<string, unknown>, {
        privateKey: privateKey as CryptoKey,
        publicKey: publicKey as CryptoKey,
      })
    ).sign,
    activatesAt: meta.activatesAt,
    retiresAt: meta.retiresAt,
    expiresAt: meta.expiresAt,
  };
}

/** Generates a key pair as a storage record. */
export async function generateSigningKey(alg: SigningAlg, now: number): Promise<SigningKeyRecord> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, modulusLength: 2048 });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { kid, alg, privateJwk: JSON.stringify({ ...jwk, kid, alg }), createdAt: now, activatesAt: now };
}

/**
 * Holds the signing keys of one server instance. Reads them from storage at start and every
 * `refreshIntervalSeconds`, and again (at most every few seconds) when a token names an unknown
 * `kid`, which is how a rotation made by another instance is picked up.
 */
export class KeyStore {
  readonly #storage: Storage;
  readonly #runtime: Runtime;
  readonly #options: KeyStoreOptions;
  #keys: LoadedKey[] = [];
  #jwksJson = '{"keys":[]}';
  #loadedAt = -Infinity;
  #loading: Promise<void> | undefined;
  #lastMissRefresh = -Infinity;

  constructor(storage: Storage, runtime: Runtime, options: KeyStoreOptions) {
    this.#storage = storage;
    this.#runtime = runtime;
    this.#options = options;
  }

  /** Loads keys, generating a first key per algorithm when storage has none. */
  async init(): Promise<void> {
    if (this.#options.privateJwks !== undefined) {
      const loaded: LoadedKey[] = [];
      for (const raw of this.#options.privateJwks) {
        const alg = raw.alg;
        if (alg !== 'RS256' && alg !== 'ES256')
          throw new TypeError('options.keys.privateJwks: every key needs alg RS256 or ES256');
        if (typeof raw.d !== 'string')
          throw new TypeError('options.keys.privateJwks: every key must be private (have d)');
        loaded.push(await loadKey(raw as JWK, { kid: raw.kid as string | undefined, alg, activatesAt: 0 }));
      }
      for (const alg of this.#options.algs) {
        if (!loaded.some((k) => k.alg === alg))
          throw new TypeError(`options.keys.privateJwks: no ${alg} key`);
      }
      this.#install(loaded);
      this.#loadedAt = Infinity;
      return;
    }
    await this.#reload();
    const now = nowSeconds(this.#runtime.clock);
    let added = false;
    for (const alg of this.#options.algs) {
      if (this.#active(alg, now) !== undefined) continue;
      const key = await generateSigningKey(alg, now);
      // Generating takes a while (RSA: up to hundreds of ms); an instance starting on the same
      // storage may have stored a key meanwhile. Use it, so that both sign with one key.
      await this.#reload();
      if (this.#active(alg, now) !== undefined) continue;
      await this.#storage.keys.add(key);
      this.#runtime.logger.info('generated a signing key', { alg });
      added = true;
    }
    if (added) {
      await this.#reload();
      // An instance that checked before our key was stored may still add one of its own: read
      // again on first use, so that both then publish both and sign with the same one.
      this.#loadedAt = -Infinity;
    }
  }

  async #reload(): Promise<void> {
    const now = nowSeconds(this.#runtime.clock);
    const records = await this.#storage.keys.list();
    const loaded: LoadedKey[] = [];
    for (const record of records) {
      if (record.expiresAt !== undefined && record.expiresAt <= now) continue;
      if (record.alg !== 'RS256' && record.alg !== 'ES256') continue;
      const existing = this.#keys.find((k) => k.kid === record.kid);
      if (
        existing !== undefined &&
        existing.retiresAt === record.retiresAt &&
        existing.expiresAt === record.expiresAt
      ) {
        loaded.push(existing);
        continue;
      }
      loaded.push(
        await loadKey(JSON.parse(record.privateJwk) as JWK, {
          kid: record.kid,
          alg: record.alg,
          activatesAt: record.activatesAt,
          retiresAt: record.retiresAt,
          expiresAt: record.expiresAt,
        }),
      );
    }
    this.#install(loaded);
    this.#loadedAt = now;
  }

  #install(keys: LoadedKey[]): void {
    this.#keys = keys;
    this.#jwksJson = JSON.stringify({ keys: keys.map((k) => k.publicJwk) });
  }

  /** The key that signs for `alg` now: the latest activated, not retired; ties broken by `kid`. */
  #active(alg: SigningAlg, now: number): LoadedKey | undefined {
    let best: LoadedKey | undefined;
    for (const key of this.#keys) {
      if (key.alg !== alg || key.activatesAt > now) continue;
      if (key.retiresAt !== undefined && key.retiresAt <= now) continue;
      if (
        best === undefined ||
        key.activatesAt > best.activatesAt ||
        (key.activatesAt === best.activatesAt && key.kid < best.kid)
      ) {
        best = key;
      }
    }
    return best;
  }

  /** Re-reads storage when the refresh interval has passed. Concurrent callers share one read. */
  async #fresh(): Promise<void> {
    const now = nowSeconds(this.#runtime.clock);
    if (now - this.#loadedAt < this.#options.refreshIntervalSeconds) return;
    this.#loading ??= this.#reload().finally(() => {
      this.#loading = undefined;
    });
    await this.#loading;
  }

  /** The key to sign with for `alg`. */
  async signingKey(alg: SigningAlg): Promise<LoadedKey> {
    await this.#fresh();
    const key = this.#active(alg, nowSeconds(this.#runtime.clock));
    if (key === undefined) throw new Error(`no active ${alg} signing key`);
    return key;
  }

  /** A published key by `kid`, re-reading storage (rate-limited) on a miss. */
  async verificationKey(kid: string): Promise<LoadedKey | undefined> {
    await this.#fresh();
    const found = this.#keys.find((k) => k.kid === kid);
    if (found !== undefined || this.#options.privateJwks !== undefined) return found;
    const now = nowSeconds(this.#runtime.clock);
    if (now - this.#lastMissRefresh < 5) return undefined;
    this.#lastMissRefresh = now;
    await this.#reload();
    return this.#keys.find((k) => k.kid === kid);
  }

  /** The public JWK Set, serialised. */
  async jwks(): Promise<string> {
    await this.#fresh();
    return this.#jwksJson;
  }

  /** Every published key (for tests and the JWKS endpoint). */
  published(): readonly LoadedKey[] {
    return this.#keys;
  }

  /** Reads the key set from storage now (after a rotation, see `rotation.ts`). */
  async refresh(): Promise<void> {
    await this.#reload();
  }
}
