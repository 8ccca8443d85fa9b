/**
 * Connection limits for a `node:http` server facing the internet: how long a client may take to
 * send its headers and its whole request, how long an idle keep-alive connection stays open, and
 * how many connections are open at once. Node's defaults (60 s for headers, 300 s for a request,
 * no cap) let a few slow clients hold sockets for minutes.
 * @module
 */
import type { Server } from 'node:http';

/**
 * Options of {@link hardenServer}. Every value is a positive integer; the defaults suit a server
 * that answers OAuth requests (small bodies, short handlers).
 *
 * @example
 * ```ts
 * import type { HardenServerOptions } from 'portcullis/node';
 *
 * // Behind a load balancer that keeps idle connections for 60 s.
 * const options: HardenServerOptions = { keepAliveTimeoutMs: 65_000, maxConnections: 4_096 };
 * ```
 * @see RFC 9112 §9.5 (closing idle connections), RFC 9110 §15.5.9 (408 Request Timeout)
 * @group Adapters
 */
export interface HardenServerOptions {
  /**
   * Time a client has to send the request line and headers, in ms; then `408` and the connection
   * is closed (slowloris). Default `10_000`.
   */
  readonly headersTimeoutMs?: number;
  /**
   * Time a client has to send the whole request, headers and body, in ms; then `408` and the
   * connection is closed (a trickled body). At least `headersTimeoutMs`. Default `30_000`.
   */
  readonly requestTimeoutMs?: number;
  /**
   * How long an idle keep-alive connection stays open between requests, in ms. Behind a proxy or
   * load balancer that reuses connections, set it above the proxy's idle timeout, or the proxy
   * may send a request on a connection being closed (a `502`). Default `5_000`.
   */
  readonly keepAliveTimeoutMs?: number;
  /**
   * Open connections beyond which a new one is closed at once, unanswered (the server emits
   * `'drop'`). Keep it below the process's file-descriptor limit (`ulimit -n`) minus what the
   * database pool and files need. Default `1_024`.
   */
  readonly maxConnections?: number;
}

const DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_024,
} as const satisfies Required<HardenServerOptions>;

/** Node checks the header and request timeouts on an interval: at most this one, so a limit is enforced within a second of it. */
const MAX_CHECK_INTERVAL_MS = 1_000;

function positiveInteger(name: keyof HardenServerOptions, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`hardenServer: ${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

/**
 * Applies connection limits to a `node:http` (or `node:https`) server: a header timeout, a
 * whole-request timeout, a keep-alive timeout and a connection cap (see
 * {@link HardenServerOptions} for each default and why). Call it before the server starts
 * listening, or in the same tick as `listen()`: Node reads how often to check the timeouts when
 * listening begins, and this sets it to at most one second (Node's default is 30 s, which lets a
 * slow client overstay a limit by that much).
 *
 * A proxy in front (nginx, a cloud load balancer) has limits of its own; these still protect the
 * process from anything that reaches it directly.
 *
 * @param server - the server, not listening yet
 * @param options - limits other than the defaults
 * @returns the same server
 * @throws RangeError when a value is not a positive integer, or `headersTimeoutMs` exceeds
 * `requestTimeoutMs`
 * @see RFC 9112 §9.5 (idle connections), RFC 9110 §15.5.9 (408 Request Timeout)
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createAuthorizationServer, memoryStorage } from 'portcullis';
 * import { hardenServer, toNodeHandler } from 'portcullis/node';
 *
 * const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });
 * const server = hardenServer(createServer(toNodeHandler(oauth)), { maxConnections: 2_048 });
 * server.listen(3000, '127.0.0.1');
 * ```
 * @group Adapters
 */
export function hardenServer<S extends Server>(server: S, options: HardenServerOptions = {}): S {
  const headersTimeout = positiveInteger(
    'headersTimeoutMs',
    options.headersTimeoutMs ?? DEFAULTS.headersTimeoutMs,
  );
  const requestTimeout = positiveInteger(
    'requestTimeoutMs',
    options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
  );
  const keepAliveTimeout = positiveInteger(
    'keepAliveTimeoutMs',
    options.keepAliveTimeoutMs ?? DEFAULTS.keepAliveTimeoutMs,
  );
  const maxConnections = positiveInteger('maxConnections', options.maxConnections ?? DEFAULTS.maxConnections);
  if (headersTimeout > requestTimeout) {
    throw new RangeError(
      `hardenServer: headersTimeoutMs (${headersTimeout}) must not exceed requestTimeoutMs (${requestTimeout})`,
    );
  }
  server.headersTimeout = headersTimeout;
  server.requestTimeout = requestTimeout;
  server.keepAliveTimeout = keepAliveTimeout;
  server.maxConnections = maxConnections;
  // Read by Node when the server starts listening (`connectionsCheckingInterval` of createServer).
  (server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.min(
    MAX_CHECK_INTERVAL_MS,
    Math.ceil(headersTimeout / 2),
  );
  return server;
}
