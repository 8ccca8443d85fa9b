/**
 * Settings that are acceptable somewhere but dangerous if they reach production unnoticed: each
 * announces itself once, at start, through the logger (`warn`), so that the operator sees it in
 * the first lines the server writes. Development settings on loopback are noted at `info` only.
 * @module
 */
import type { ParsedOptions } from './options.js';
import { isMemoryStorage } from './storage/memory.js';

/** `NODE_ENV`, where the runtime has one (Node, Bun, Deno with env access); nothing elsewhere. */
function nodeEnv(): string | undefined {
  try {
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
    return env?.NODE_ENV;
  } catch {
    return undefined; // Deno without --allow-env throws
  }
}

/**
 * Logs, once per server, each insecure or surprising setting of `options`:
 * - an `http` issuer: `info` in development (loopback is the only place the options accept it),
 *   `warn` when `NODE_ENV` is `production`;
 * - dynamic registration open to anyone with no `rateLimiter`: `warn`;
 * - `memoryStorage()` when `NODE_ENV` is `production`: `warn` (everything is lost on restart).
 */
export function announceRiskySettings(options: ParsedOptions): void {
  const { issuer, logger } = options;
  const production = nodeEnv() === 'production';
  if (issuer.startsWith('http://')) {
    const log = production ? logger.warn : logger.info;
    log.call(logger, 'the issuer uses http: acceptable on loopback for development, never in production', {
      issuer,
    });
  }
  if (options.registration.enabled && options.rateLimiter === undefined) {
    logger.warn(
      'dynamic registration is open to anyone and no rateLimiter is configured: set rateLimiter (portcullis/rate-limit) or registration.enabled: false',
      { option: 'rateLimiter' },
    );
  }
  if (production && isMemoryStorage(options.storage)) {
    logger.warn(
      'memoryStorage() in production: every client, grant, token and signing key is lost on restart',
      {
        option: 'storage',
      },
    );
  }
}
