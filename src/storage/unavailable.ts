/**
 * Transient infrastructure failures of a storage: the database is down, restarting, failing over,
 * overloaded, or did not answer within its time bound. The server answers them `503
 * temporarily_unavailable` with `Retry-After` (FLT-01) instead of `500 server_error`, because the
 * client did nothing wrong and the same request will work again shortly.
 *
 * This module knows PostgreSQL's error classes and Node's network error codes by their strings; it
 * imports no driver, so the core can use it and a host can classify its own database errors.
 * @module
 */

/**
 * Why a storage call failed transiently:
 * - `unreachable`: no connection could be opened or checked out (refused, DNS, connect timeout,
 *   the database starting up or shutting down); the statement never reached the database;
 * - `connection_lost`: the connection broke while the statement ran (terminated by an
 *   administrator, a restart or a failover, reset); whether it took effect is unknown;
 * - `timeout`: the statement did not finish within its bound (`statement_timeout`, a lock timeout,
 *   or the client's own query timeout, after which whether it took effect is unknown);
 * - `overloaded`: the database refused for lack of resources (too many connections, memory, disk);
 * - `conflict`: a serialization failure or deadlock; the database rolled the statement back.
 *
 * @example
 * ```ts
 * import type { StorageUnavailableReason } from 'portcullis';
 *
 * const page: ReadonlySet<StorageUnavailableReason> = new Set(['unreachable', 'overloaded']);
 * ```
 * @see docs/storage.md, "When PostgreSQL is unavailable"
 * @group Storage
 * @category Errors
 */
export type StorageUnavailableReason =
  | 'unreachable'
  | 'connection_lost'
  | 'timeout'
  | 'overloaded'
  | 'conflict';

/**
 * How long a client is asked to wait (`Retry-After`, seconds) when the storage is unavailable: a
 * restart or failover of PostgreSQL takes seconds, and a client retrying sooner only adds load.
 *
 * @example
 * ```ts
 * import { STORAGE_RETRY_AFTER_SECONDS } from 'portcullis';
 *
 * console.log(`clients retry after ${STORAGE_RETRY_AFTER_SECONDS} s`);
 * ```
 * @see RFC 9110 §10.2.3 (`Retry-After`), RFC 6749 §4.1.2.1 (`temporarily_unavailable`)
 * @group Storage
 * @category Errors
 */
export const STORAGE_RETRY_AFTER_SECONDS = 2;

/**
 * Options of {@link StorageUnavailableError}.
 *
 * @example
 * ```ts
 * import { StorageUnavailableError, type StorageUnavailableErrorOptions } from 'portcullis';
 *
 * const options: StorageUnavailableErrorOptions = { mayHaveApplied: false, cause: new Error('ECONNREFUSED') };
 * throw new StorageUnavailableError('unreachable', 'the key-value store refused the connection', options);
 * ```
 * @see docs/storage.md, "When PostgreSQL is unavailable"
 * @group Storage
 * @category Errors
 */
export interface StorageUnavailableErrorOptions {
  /**
   * Whether the failed call may have taken effect with only its answer lost. Default: `true` for
   * `connection_lost` and `timeout`, `false` otherwise.
   */
  readonly mayHaveApplied?: boolean;
  /** The driver's error, kept for logs and never sent to a client. */
  readonly cause?: unknown;
}

/**
 * A storage call failed for a transient infrastructure reason. Storages throw it (the PostgreSQL
 * storage classifies `pg`'s errors into it); the server answers `503 temporarily_unavailable` with
 * `Retry-After: 2`, logs it once at `warn`, and the client's retry works once the database is back.
 * A third-party storage may throw it too, for the same effect.
 *
 * Its message names the failure class and the database's error code, never a statement's
 * parameters (which hold token hashes and user ids).
 *
 * @example
 * ```ts
 * import { StorageUnavailableError } from 'portcullis';
 *
 * async function read(key: string): Promise<string | null> {
 *   try {
 *     return await fetchFromMyStore(key);
 *   } catch (error) {
 *     throw new StorageUnavailableError('unreachable', 'my store did not answer', { cause: error });
 *   }
 * }
 * declare function fetchFromMyStore(key: string): Promise<string | null>;
 * ```
 * @see RFC 6749 §4.1.2.1 and §5.2 (`temporarily_unavailable`), RFC 9110 §15.6.4 (503); docs/storage.md
 * @group Storage
 * @category Errors
 */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError';
  /** Stable code, for logs and alerts. */
  readonly code = 'storage_unavailable';
  /** The class of failure. */
  readonly reason: StorageUnavailableReason;
  /** Whether the call may have taken effect with only its answer lost (see {@link StorageUnavailableErrorOptions}). */
  readonly mayHaveApplied: boolean;

  /**
   * @param reason - the class of failure
   * @param message - what failed, without parameters or secrets
   * @param options - whether it may have applied, and the driver's error
   */
  constructor(
    reason: StorageUnavailableReason,
    message?: string,
    options: StorageUnavailableErrorOptions = {},
  ) {
    super(
      message ?? `the storage is unavailable (${reason})`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.reason = reason;
    this.mayHaveApplied = options.mayHaveApplied ?? (reason === 'connection_lost' || reason === 'timeout');
  }
}

// SQLSTATE classes and codes of PostgreSQL (Appendix A of its manual) that mean "try again later".
const SQLSTATE: Readonly<Record<string, { reason: StorageUnavailableReason; applied: boolean }>> = {
  // A FATAL sent to end the session: the statement was aborted, unless the commit had just
  // completed and only its answer was lost.
  '57P01': { reason: 'connection_lost', applied: true }, // admin_shutdown (pg_terminate_backend, restart)
  '57P02': { reason: 'connection_lost', applied: true }, // crash_shutdown
  '57P03': { reason: 'unreachable', applied: false }, // cannot_connect_now (starting up, shutting down)
  '57P05': { reason: 'connection_lost', applied: true }, // idle_session_timeout
  '57014': { reason: 'timeout', applied: false }, // query_canceled (statement_timeout)
  '55P03': { reason: 'timeout', applied: false }, // lock_not_available (lock_timeout)
  '40001': { reason: 'conflict', applied: false }, // serialization_failure
  '40P01': { reason: 'conflict', applied: false }, // deadlock_detected
  '53000': { reason: 'overloaded', applied: false }, // insufficient_resources
  '53100': { reason: 'overloaded', applied: false }, // disk_full
  '53200': { reason: 'overloaded', applied: false }, // out_of_memory
  '53300': { reason: 'overloaded', applied: false }, // too_many_connections
  '53400': { reason: 'overloaded', applied: false }, // configuration_limit_exceeded
  '25P04': { reason: 'connection_lost', applied: true }, // transaction_timeout (PostgreSQL 17)
};

// Node's network errors: the first group while connecting (nothing was sent), the second on an
// open connection.
const CONNECT_ERRNO = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
]);
const LOST_ERRNO = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ENETRESET',
  'ERR_STREAM_DESTROYED',
]);

// node-postgres' own messages, which carry no code.
const PG_MESSAGES: readonly [RegExp, StorageUnavailableReason, boolean][] = [
  [/^timeout exceeded when trying to connect$/, 'unreachable', false], // pool: no connection in time
  [/^Connection terminated due to connection timeout$/, 'unreachable', false],
  [/^timeout expired$/, 'unreachable', false],
  [/^Query read timeout$/, 'timeout', true], // query_timeout: the statement may still complete
  [/^Connection terminated( unexpectedly)?$/, 'connection_lost', true],
  [/^Client has encountered a connection error and is not queryable$/, 'connection_lost', true],
  [/^Client was closed and is not queryable$/, 'connection_lost', true],
];

const MAX_DEPTH = 4;

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

/**
 * The transient failure `error` stands for, or `undefined` when it is not one (a constraint
 * violation, a bug, a wrong password: those stay `500`). Recognises a
 * {@link StorageUnavailableError} (also from another copy of the library), PostgreSQL's SQLSTATE
 * codes (classes 08, 53, 57P, serialization failures, timeouts), Node's network error codes, and
 * node-postgres' connection messages, also wrapped in `cause` or an `AggregateError`.
 *
 * @param error - anything thrown by a driver or a storage
 * @returns the classified error (the original when it already is one), or `undefined`
 * @example
 * ```ts
 * import { classifyStorageFailure } from 'portcullis';
 *
 * const failure = classifyStorageFailure(Object.assign(new Error('terminating connection'), { code: '57P01' }));
 * console.log(failure?.reason); // 'connection_lost'
 * ```
 * @see https://www.postgresql.org/docs/current/errcodes-appendix.html
 * @group Storage
 * @category Errors
 */
export function classifyStorageFailure(error: unknown): StorageUnavailableError | undefined {
  return classify(error, 0);
}

function classify(error: unknown, depth: number): StorageUnavailableError | undefined {
  if (error instanceof StorageUnavailableError) return error;
  if (!(error instanceof Error) || depth > MAX_DEPTH) return undefined;
  if (error.name === 'StorageUnavailableError') {
    // From another copy of the library (its ESM and CJS builds side by side).
    const reason = field(error, 'reason');
    const applied = field(error, 'mayHaveApplied');
    return new StorageUnavailableError(
      typeof reason === 'string' ? (reason as StorageUnavailableReason) : 'unreachable',
      error.message,
      { ...(typeof applied === 'boolean' ? { mayHaveApplied: applied } : {}), cause: error },
    );
  }
  const code = field(error, 'code');
  if (typeof code === 'string') {
    const known = SQLSTATE[code] ?? connectionException(code);
    if (known !== undefined) return wrap(known.reason, known.applied, `${code} ${error.message}`, error);
    if (CONNECT_ERRNO.has(code)) return wrap('unreachable', false, code, error);
    if (LOST_ERRNO.has(code)) return wrap('connection_lost', true, code, error);
  }
  for (const [pattern, reason, applied] of PG_MESSAGES) {
    if (pattern.test(error.message)) return wrap(reason, applied, error.message, error);
  }
  const inner = error instanceof AggregateError ? error.errors[0] : error.cause;
  const found = inner === undefined ? undefined : classify(inner, depth + 1);
  return found === undefined
    ? undefined
    : new StorageUnavailableError(found.reason, found.message, {
        mayHaveApplied: found.mayHaveApplied,
        cause: error,
      });
}

/** SQLSTATE class 08, connection exceptions: 08001 and 08004 refuse a new connection, the others break one. */
function connectionException(
  code: string,
): { reason: StorageUnavailableReason; applied: boolean } | undefined {
  if (!/^08[0-9A-Z]{3}$/.test(code)) return undefined;
  return code === '08001' || code === '08004'
    ? { reason: 'unreachable', applied: false }
    : { reason: 'connection_lost', applied: true };
}

function wrap(
  reason: StorageUnavailableReason,
  mayHaveApplied: boolean,
  detail: string,
  cause: unknown,
): StorageUnavailableError {
  return new StorageUnavailableError(reason, `the storage is unavailable (${reason}: ${detail})`, {
    mayHaveApplied,
    cause,
  });
}

/**
 * Whether `error` is a transient storage failure: a {@link StorageUnavailableError}, or a database
 * or network error of a kind that goes away by itself (see {@link classifyStorageFailure}). For a
 * host's own error handling: answer these `503` with `Retry-After`, as the library does.
 *
 * @param error - anything thrown
 * @returns true for a transient storage failure
 * @example
 * ```ts
 * import { isStorageUnavailable, STORAGE_RETRY_AFTER_SECONDS } from 'portcullis';
 *
 * function statusOf(error: unknown): { status: number; headers: Record<string, string> } {
 *   return isStorageUnavailable(error)
 *     ? { status: 503, headers: { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) } }
 *     : { status: 500, headers: {} };
 * }
 * ```
 * @see RFC 9110 §15.6.4 (503), §10.2.3 (`Retry-After`)
 * @group Storage
 * @category Errors
 */
export function isStorageUnavailable(error: unknown): boolean {
  return classifyStorageFailure(error) !== undefined;
}
