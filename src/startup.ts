/**
 * Start-up: what must work before a server answers its first request (the storage reachable and
 * its schema current, the signing keys loaded or generated), and {@link StartupError}, which says
 * which of them failed.
 * @module
 */
import { GENERATED_KEY_ALGS, type ServerConfig } from './config.js';
import { KeyStore, type KeyStoreOptions, type SigningAlg } from './keys/key-store.js';
import { InvalidOptionsError } from './options.js';

/**
 * What failed when {@link createAuthorizationServer} could not start:
 * - `storage_unavailable`: the storage could not be reached (connection refused, authentication
 *   failed, database missing) or failed on its first use;
 * - `storage_migration_failed`: the storage was reached but its schema could not be brought to, or
 *   is not at, the version this release needs (a failed migration; `autoMigrate: false` on an old
 *   schema);
 * - `signing_keys_unavailable`: no usable signing key: configured keys that do not import, or
 *   keys that could not be generated or stored;
 * - `invalid_configuration`: options that could not be put to work: an object or function given
 *   in the options (a scope policy, a metadata-document fetcher) threw while the options were
 *   checked or resolved.
 *
 * @example
 * ```ts
 * import type { StartupErrorCode } from 'portcullis';
 *
 * const retryable: readonly StartupErrorCode[] = ['storage_unavailable'];
 * ```
 * @see docs/getting-started.md (starting the server)
 * @group Authorization Server
 */
export type StartupErrorCode =
  | 'storage_unavailable'
  | 'storage_migration_failed'
  | 'signing_keys_unavailable'
  | 'invalid_configuration';

/**
 * Rejected by {@link createAuthorizationServer} when the server cannot start with valid options.
 * `code` says what failed and is stable across releases; `cause` is the underlying error (a
 * driver's connection error, a migration's SQL error), for your logs. The message never contains
 * secrets from the options.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage, StartupError } from 'portcullis';
 *
 * try {
 *   await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage() });
 * } catch (error) {
 *   if (error instanceof StartupError && error.code === 'storage_unavailable') {
 *     console.error('database unreachable, retrying in 5 s', error.cause);
 *   }
 *   throw error;
 * }
 * ```
 * @see docs/getting-started.md (starting the server)
 * @group Authorization Server
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
  /** What failed; see {@link StartupErrorCode}. */
  readonly code: StartupErrorCode;
  /**
   * @param code - what failed
   * @param message - a sentence for a person
   * @param cause - the underlying error
   */
  constructor(code: StartupErrorCode, message: string, cause: unknown) {
    super(`${message} (${code})`, { cause });
    this.code = code;
  }
}

/**
 * Runs one start-up step, turning its failure into a {@link StartupError} of `code` (an
 * {@link InvalidOptionsError} or a StartupError passes through unchanged).
 */
export async function startupStep<T>(
  code: StartupErrorCode | ((error: unknown) => StartupErrorCode),
  what: string,
  step: () => T | Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof StartupError || error instanceof InvalidOptionsError) throw error;
    const detail = error instanceof Error ? `: ${error.message}` : '';
    throw new StartupError(typeof code === 'function' ? code(error) : code, `${what}${detail}`, error);
  }
}

/** Node's errors for a peer that cannot be reached. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/**
 * Tells a storage that cannot be reached from one whose schema is wrong. A storage may say so
 * itself with `code` (`storage_unavailable` or `storage_migration_failed`) on its error. Otherwise:
 * Node's network errors and the SQLSTATE classes of connections (08), authorization (28), a missing
 * database (3D000), resources (53) and shutdown (57P) mean unreachable; any other SQLSTATE is a
 * statement that failed on first use, which for the SQL storages is the migration (or the version
 * check of `autoMigrate: false`); anything else is unreachable.
 */
export function storageFailureCode(error: unknown): 'storage_unavailable' | 'storage_migration_failed' {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (code === 'storage_unavailable' || code === 'storage_migration_failed') return code;
  if (typeof code === 'string') {
    if (UNREACHABLE.has(code)) return 'storage_unavailable';
    if (/^[0-9A-Z]{5}$/.test(code)) {
      const unreachable = /^(08|28|53|57P)/.test(code) || code === '3D000';
      return unreachable ? 'storage_unavailable' : 'storage_migration_failed';
    }
  }
  const message = error instanceof Error ? error.message : '';
  return /migrat|schema .* version/i.test(message) ? 'storage_migration_failed' : 'storage_unavailable';
}

/**
 * Uses the storage once, so that an unreachable database or a schema that cannot be migrated fails
 * the start rather than the first request (the SQL storages connect and migrate on first use).
 */
export async function touchStorage(config: ServerConfig): Promise<void> {
  await startupStep(storageFailureCode, 'the storage failed on its first use', () =>
    config.storage.keys.list(),
  );
}

/** The key store's settings: which algorithms it keeps a key for, how long retired keys stay published. */
export function signingKeyPlan(config: ServerConfig): KeyStoreOptions {
  const { idTokenAlg, accessTokenAlg, privateJwks, refreshIntervalSeconds, wrapping } = config.keys;
  // Generated keys cover both algorithms (clients may register either for ID tokens).
  const generated = new Set<SigningAlg>([accessTokenAlg, idTokenAlg, ...GENERATED_KEY_ALGS]);
  return {
    algs: [...(privateJwks === undefined ? generated : new Set([idTokenAlg, accessTokenAlg]))],
    privateJwks,
    refreshIntervalSeconds,
    retentionSeconds: Math.max(config.tokens.accessTokenTtlSeconds, config.tokens.idTokenTtlSeconds) + 300,
    wrapping,
  };
}

/** Loads the signing keys (generating the first ones into storage when there are none). */
export async function loadSigningKeys(config: ServerConfig, plan: KeyStoreOptions): Promise<KeyStore> {
  return startupStep('signing_keys_unavailable', 'no usable signing key', async () => {
    const keys = new KeyStore(config.storage, config.runtime, plan);
    await keys.init();
    return keys;
  });
}
