/**
 * What every handler may use besides its request: the clock, randomness and the logger.
 * @module
 */
import type { RandomSource } from './crypto.js';

/**
 * Fields attached to a log line. Never put token, code or secret values here.
 *
 * @example
 * ```ts
 * import type { LogFields } from 'portcullis';
 *
 * const fields: LogFields = { clientId: 'abc', status: 400, retried: false };
 * ```
 * @see docs/security.md, "What the host must do" (logging hygiene)
 * @group Runtime
 */
export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * A minimal structured logger; `console` fits. The server logs failed requests (`error`, without
 * token values), insecure settings (`warn`, e.g. an http issuer) and key generation (`info`).
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, type Logger, memoryStorage } from 'portcullis';
 *
 * const logger: Logger = {
 *   debug: () => {},
 *   info: (message, fields) => console.info(JSON.stringify({ level: 'info', message, ...fields })),
 *   warn: (message, fields) => console.warn(JSON.stringify({ level: 'warn', message, ...fields })),
 *   error: (message, fields) => console.error(JSON.stringify({ level: 'error', message, ...fields })),
 * };
 * await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage(), logger });
 * ```
 * @see docs/security.md, "What the host must do" (logging hygiene)
 * @group Runtime
 */
export interface Logger {
  /** Detail for debugging; off in most deployments. */
  debug(message: string, fields?: LogFields): void;
  /** Notable events of normal operation (a signing key generated). */
  info(message: string, fields?: LogFields): void;
  /** Something is wrong but the request was answered (an insecure setting, a failed cleanup). */
  warn(message: string, fields?: LogFields): void;
  /** A failure: a request answered with `server_error`, an event listener that threw. */
  error(message: string, fields?: LogFields): void;
}

/**
 * A logger that drops everything: the default `logger`, so a library never writes to your logs
 * uninvited.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, memoryStorage, silentLogger } from 'portcullis';
 *
 * // Tests that expect errors, without the noise.
 * await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage(), logger: silentLogger });
 * ```
 * @see docs/security.md, "What the host must do" (logging hygiene)
 * @group Runtime
 */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/**
 * A clock returning epoch milliseconds; injectable for tests. Every lifetime (codes, tokens,
 * pending authorizations, the metadata document cache) is measured with it.
 *
 * @example
 * ```ts
 * import { type Clock, createAuthorizationServer, memoryStorage } from 'portcullis';
 *
 * let now = Date.parse('2030-01-01T00:00:00Z');
 * const clock: Clock = () => now;
 * await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage(), clock });
 * now += 61_000; // codes issued before are now expired (60 s)
 * ```
 * @see RFC 6749 §4.1.2 (code lifetime)
 * @group Runtime
 */
export type Clock = () => number;

/** The runtime services shared by all handlers. */
export interface Runtime {
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly logger: Logger;
}

/** Epoch seconds from a clock. */
export function nowSeconds(clock: Clock): number {
  return Math.floor(clock() / 1000);
}
