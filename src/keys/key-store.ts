/**
 * Signing keys: loaded from options or from storage (generated on first start); rotation is in
 * `rotation.ts`.
 * A rotated key is published before it signs (by the JWKS cache lifetime); retired keys stay in the
 * JWKS until every token they signed has expired. Private keys are wrapped in storage when
 * `keys.wrapping` is configured.
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

/**
 * How long the JWKS may be cached (`Cache-Control: max-age`), in seconds. A rotated key is
 * published at least this long (plus `keys.refreshIntervalSeconds`) before it signs (ABU-10).
 */
export const JWKS_MAX_AGE_SECONDS = 300;

/**
 * Wraps and unwraps private signing keys on their way to and from storage: with a KMS, or with a
 * key from the environment. Both receive and return text; `unwrap(wrap(jwk))` must give `jwk`
 * back. The storage then only ever holds what `wrap` returned.
 *
 * @example
 * ```ts
 * import type { KeyWrapping } from 'portcullis';
 *
 * // AES-256-GCM with a 32-byte key from the environment (base64), through Web Crypto.
 * const raw = Uint8Array.from(atob(process.env.KEY_WRAPPING_SECRET ?? ''), (c) => c.charCodeAt(0));
 * const aes = await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
 * const wrapping: KeyWrapping = {
 *   async wrap(privateJwk) {
 *     const iv = crypto.getRandomValues(new Uint8Array(12));
 *     const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, aes, new TextEncoder().encode(privateJwk));
 *     return `${Buffer.from(iv).toString('base64url')}.${Buffer.from(sealed).toString('base64url')}`;
 *   },
 *   async unwrap(wrapped) {
 *     const [iv = '', sealed = ''] = wrapped.split('.');
 *     const opened = await crypto.subtle.decrypt(
 *       { name: 'AES-GCM', iv: Buffer.from(iv, 'base64url') },
 *       aes,
 *       Buffer.from(sealed, 'base64url'),
 *     );
 *     return new TextDecoder().decode(opened);
 *   },
 * };
 * ```
 * @see docs/security.md, "Key custody"
 * @group Configuration
 */
export interface KeyWrapping {
  /** Wraps a private JWK (JSON text) for storage. */
  wrap(privateJwk: string): string | Promise<string>;
  /** Gives back the private JWK (JSON text) that `wrap` wrapped; throws when it cannot. */
  unwrap(wrapped: string): string | Promise<string>;
}

/** Options of the key store. */
export interface KeyStoreOptions {
  readonly algs: readonly SigningAlg[];
  readonly privateJwks: readonly Readonly<Record<string, unknown>>[] | undefined;
  readonly refreshIntervalSeconds: number;
  /** How long a retired key stays published: the longest lifetime of anything it signed. */
  readonly retentionSeconds: number;
  /** How stored private keys are wrapped; `undefined`: stored as JWK text. */
  readonly wrapping?: KeyWrapping | undefined;
}

/**
 * How long before it signs a rotated key is published: the JWKS cache lifetime, plus the interval
 * at which the other instances re-read the key set (they publish it only then).
 */
export function publicationLeadSeconds(options: Pick<KeyStoreOptions, 'refreshIntervalSeconds'>): number {
  return JWKS_MAX_AGE_SECONDS + options.refreshIntervalSeconds;
}

/** The record as storage keeps it: its private JWK wrapped when wrapping is configured. */
export async function sealedRecord(
  record: SigningKeyRecord,
  wrapping: KeyWrapping | undefined,
): Promise<SigningKeyRecord> {
  if (wrapping === undefined) return record;
  return { ...record, privateJwk: await wrapping.wrap(record.privateJwk) };
}

/** A stored private JWK that is clear JSON text (stored before wrapping was configured). */
function clearJwk(stored: string): JWK | undefined {
  try {
    const value = JSON.parse(stored) as unknown;
    return typeof value === 'object' && value !== null && typeof (value as JWK).kty === 'string'
      ? (value as JWK)
      : undefined;
  } catch {
    return undefined;
  }
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

/** Generates a key pair as a storage record (its private JWK clear), signing from `activatesAt`. */
export async function generateSigningKey(
  alg: SigningAlg,
  now: number,
  activatesAt = now,
): Promise<SigningKeyRecord> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, modulusLength: 2048 });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { kid, alg, privateJwk: JSON.stringify({ ...jwk, kid, alg }), createdAt: now, activatesAt };
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
      await this.#storage.keys.add(await sealedRecord(key, this.#options.wrapping));
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
        await loadKey(await this.#privateJwkOf(record), {
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

  /**
   * The private JWK of a stored record, unwrapped when wrapping is configured. A clear key stored
   * before wrapping was configured still loads, with a warning: rotate to store its successor
   * wrapped. An unwrap that fails throws (at start: `signing_keys_unavailable`).
   */
  async #privateJwkOf(record: SigningKeyRecord): Promise<JWK> {
    const { wrapping } = this.#options;
    const clear = clearJwk(record.privateJwk);
    if (wrapping === undefined) {
      if (clear === undefined)
        throw new TypeError(`signing key ${record.kid} is wrapped: configure keys.wrapping`);
      return clear;
    }
    if (clear !== undefined) {
      this.#runtime.logger.warn('a signing key is stored unwrapped: rotate the keys to store them wrapped', {
        kid: record.kid,
      });
      return clear;
    }
    const unwrapped = clearJwk(await wrapping.unwrap(record.privateJwk));
    if (unwrapped === undefined) throw new TypeError(`signing key ${record.kid}: unwrap did not give a JWK`);
    return unwrapped;
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
