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

/** One log line: a JSON object with the time, level, message and fields (absent fields left out). */
function jsonLine(level: 'warn' | 'error', message: string, fields: LogFields | undefined): string {
  const line: Record<string, unknown> = { time: new Date().toISOString(), level, message };
  for (const [name, value] of Object.entries(fields ?? {})) {
    if (value !== undefined && !(name in line)) line[name] = value;
  }
  return JSON.stringify(line);
}

/**
 * The default `logger`: warnings and errors, one JSON line each, on standard error (through
 * `console.error`, so it works on every runtime); `debug` and `info` are dropped. What the server
 * logs never holds a token, code, secret or a statement's parameters, so the lines are safe to
 * ship to a log store. Pass your own {@link Logger} to route them elsewhere, or
 * {@link silentLogger} to drop them.
 *
 * @example
 * ```ts
 * import { createAuthorizationServer, defaultLogger, memoryStorage } from 'portcullis';
 *
 * // The same as leaving `logger` out: a 500 writes a line such as
 * // {"time":"2030-01-01T00:00:00.000Z","level":"error","message":"request failed","path":"/oauth/token","requestId":"5f0c9d2a41b7e368","error":"Error: ..."}
 * await createAuthorizationServer({ issuer: 'https://auth.example.com', storage: memoryStorage(), logger: defaultLogger });
 * ```
 * @see docs/security.md, "Logging"
 * @group Runtime
 */
export const defaultLogger: Logger = {
  debug() {},
  info() {},
  warn(message, fields) {
    console.error(jsonLine('warn', message, fields));
  },
  error(message, fields) {
    console.error(jsonLine('error', message, fields));
  },
};

/**
 * A logger that drops everything, for tests that expect failures. The default is
 * {@link defaultLogger}, which writes warnings and errors to standard error.
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
