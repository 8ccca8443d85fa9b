/**
 * The default metadata document fetcher, over `node:https`, with the SSRF defences of
 * draft-ietf-oauth-client-id-metadata-document-01 §6.5 and §6.6:
 *
 * 1. resolve the host once (all addresses, all families) and refuse when ANY address is
 *    special-use: an attacker who controls DNS cannot hide one private answer among public ones;
 * 2. connect to the first vetted address only: `https.request` gets a `lookup` that answers that
 *    address whatever it is asked, so no second DNS query can swap it (DNS rebinding); TLS still
 *    sends SNI for, and verifies the certificate against, the original host name; after the
 *    handshake the socket's peer address is compared with the vetted one;
 * 3. never follow redirects (no redirect logic exists here; the 3xx is returned as is);
 * 4. stop at the byte cap (a `Content-Length` above it is refused before reading; a body without
 *    one is cut when it passes the cap), at the connect timeout, and at the total time budget,
 *    which also ends a slow drip;
 * 5. ask for `application/json` and no compression (a compressed body is refused, never inflated);
 *    no proxy, no connection reuse, no cookies.
 *
 * `node:https` and `node:dns` are loaded through `process.getBuiltinModule` when the fetcher runs,
 * never imported: the module graph of `portcullis` stays free of Node built-ins, so bundles for
 * Workers and browsers do not break on an unresolvable `node:` specifier. Node 20.16+, Bun and Deno
 * provide `getBuiltinModule`; elsewhere this fetcher reports that a `fetcher` must be configured.
 * @module
 */
import type * as Dns from 'node:dns';
import type { IncomingMessage } from 'node:http';
import type * as Https from 'node:https';
import type { Socket } from 'node:net';
import { DEFAULTS } from '../defaults.js';
import { type AddressRange, parseAddressRange, parseIPAddress } from '../protocol/ip-address.js';
import { ClientMetadataDocumentError, type ClientMetadataDocumentProblem } from './errors.js';
import type { HostLookup, MetadataFetcher, MetadataFetchResponse, ResolvedAddress } from './fetcher.js';
import { addressRefusal } from './special-use.js';

/**
 * Options of {@link createNodeMetadataFetcher}.
 *
 * @example
 * ```ts
 * import { createNodeMetadataFetcher, type NodeMetadataFetcherOptions } from 'portcullis';
 *
 * const options: NodeMetadataFetcherOptions = {
 *   allowSpecialUseAddresses: ['10.20.0.0/16'], // the intranet where your own agents publish documents
 *   connectTimeoutMs: 1000,
 *   userAgent: 'example-auth (client metadata fetcher)',
 * };
 * const fetcher = createNodeMetadataFetcher(options);
 * ```
 * @see draft-ietf-oauth-client-id-metadata-document-01 §6.5, §6.6
 * @group Client ID Metadata Documents
 */
export interface NodeMetadataFetcherOptions {
  /** Resolves host names. Default: `dns.lookup` with `all: true` (the system resolver, `/etc/hosts` included). */
  lookup?: HostLookup;
  /**
   * Special-use ranges (CIDR or single addresses) that may be fetched anyway: an intranet client
   * host, or a test server on loopback. Default: none. Draft §6.5 allows loopback only when this
   * server itself runs on that loopback interface.
   */
  allowSpecialUseAddresses?: readonly string[];
  /** PEM certificates to trust instead of Node's bundled roots (tests, private PKI). Default: Node's roots. */
  ca?: string | readonly string[];
  /** Time to open the TCP connection and finish the TLS handshake, in milliseconds. Default 2000. */
  connectTimeoutMs?: number;
  /** `User-Agent` sent with the request. Default `portcullis (client metadata fetcher)`. */
  userAgent?: string;
}

interface NodeModules {
  readonly https: typeof Https;
  readonly dns: typeof Dns;
}

function loadNodeModules(): NodeModules {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const https = proc?.getBuiltinModule?.('node:https') as typeof Https | undefined;
  const dns = proc?.getBuiltinModule?.('node:dns') as typeof Dns | undefined;
  if (https === undefined || dns === undefined) {
    throw new ClientMetadataDocumentError(
      'fetch_failed',
      'this server cannot fetch documents on this runtime (configure clientIdMetadataDocuments.fetcher)',
    );
  }
  return { https, dns };
}

/**
 * Parses `allowSpecialUseAddresses`, naming the bad entry.
 *
 * @param entries - CIDR ranges or single addresses
 * @returns the parsed ranges
 * @throws TypeError naming an entry that is not an address or range
 */
export function parseAllowedAddresses(entries: readonly string[] | undefined): AddressRange[] {
  return (entries ?? []).map((entry) => {
    const range = parseAddressRange(entry);
    if (range === undefined) {
      throw new TypeError(`allowSpecialUseAddresses: '${entry}' is not an IP address or CIDR range`);
    }
    return range;
  });
}

function fail(
  problem: ClientMetadataDocumentProblem,
  reason: string,
  cause?: unknown,
): ClientMetadataDocumentError {
  return new ClientMetadataDocumentError(problem, reason, cause);
}

const ERROR_CODE = /^[A-Z0-9_]{1,48}$/;

/** Names a socket or TLS failure from its code only (never its message, which may quote internals). */
function networkFailure(error: unknown): ClientMetadataDocumentError {
  if (error instanceof ClientMetadataDocumentError) return error;
  const raw = (error as { code?: unknown } | null)?.code;
  const code = typeof raw === 'string' && ERROR_CODE.test(raw) ? raw : undefined;
  if (code === 'ECONNREFUSED') return fail('fetch_failed', 'the connection was refused', error);
  if (code === 'ECONNRESET' || code === 'EPIPE')
    return fail('fetch_failed', 'the connection was reset', error);
  if (code === 'HPE_HEADER_OVERFLOW') return fail('too_large', 'the response headers are too large', error);
  if (
    code !== undefined &&
    (code.startsWith('ERR_TLS') || code.includes('CERT') || code.includes('SIGNATURE'))
  ) {
    return fail('fetch_failed', `the TLS certificate was not accepted (${code})`, error);
  }
  return fail('fetch_failed', `the connection failed${code === undefined ? '' : ` (${code})`}`, error);
}

function sameAddress(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = parseIPAddress(a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a);
  const y = parseIPAddress(b);
  return x !== undefined && y !== undefined && x.length === y.length && x.every((v, i) => v === y[i]);
}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(fail('timeout', `${what} took longer than allowed`)),
      Math.max(0, ms),
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * Creates the default fetcher: `node:https` with address vetting, pinning, no redirects, a byte
 * cap and timeouts (see the module documentation for each defence).
 *
 * @param options - resolver, exempt ranges, trusted CAs, connect timeout, user agent
 * @returns a {@link MetadataFetcher}
 * @throws TypeError when `allowSpecialUseAddresses` has an entry that is not an address or range
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4, §6.5, §6.6
 * @example
 * ```ts
 * import { createClientIdMetadataResolver, createNodeMetadataFetcher } from 'portcullis';
 *
 * const resolve = createClientIdMetadataResolver({
 *   fetcher: createNodeMetadataFetcher({ connectTimeoutMs: 1000 }),
 * });
 * ```
 * @group Client ID Metadata Documents
 */
export function createNodeMetadataFetcher(options: NodeMetadataFetcherOptions = {}): MetadataFetcher {
  const allowed = parseAllowedAddresses(options.allowSpecialUseAddresses);
  // The server's defaults (`clientIdMetadataDocuments`), also when the fetcher is used on its own.
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULTS.clientIdMetadataDocuments.connectTimeoutMs;
  const userAgent = options.userAgent ?? DEFAULTS.clientIdMetadataDocuments.userAgent;
  const ca =
    options.ca === undefined ? undefined : typeof options.ca === 'string' ? options.ca : [...options.ca];

  return async ({ target, maxBytes, timeoutMs }) => {
    const started = Date.now();
    const node = loadNodeModules();

    // 1. Resolve once and vet every address.
    let addresses: readonly ResolvedAddress[];
    if (target.hostKind === 'name') {
      const lookup: HostLookup =
        options.lookup ??
        (async (hostname) =>
          (await node.dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => ({
            address: a.address,
            family: a.family === 6 ? 6 : 4,
          })));
      try {
        addresses = await withDeadline(lookup(target.host), timeoutMs, 'resolving the host');
      } catch (error) {
        if (error instanceof ClientMetadataDocumentError) throw error;
        throw fail('fetch_failed', 'the host name could not be resolved', error);
      }
    } else {
      addresses = [{ address: target.host, family: target.hostKind === 'ipv6' ? 6 : 4 }];
    }
    if (addresses.length === 0) throw fail('fetch_failed', 'the host name has no address');
    for (const { address } of addresses) {
      const refusal = addressRefusal(address, allowed);
      if (refusal !== undefined) throw fail('forbidden_address', `the host resolves to a ${refusal} address`);
    }
    const vetted = addresses[0]!;

    // 2. Connect to the vetted address only.
    const pinned = (
      _hostname: string,
      lookupOptions: Dns.LookupOptions,
      callback: (
        error: NodeJS.ErrnoException | null,
        address: string | Dns.LookupAddress[],
        family?: number,
      ) => void,
    ): void => {
      if (lookupOptions.all === true) callback(null, [{ address: vetted.address, family: vetted.family }]);
      else callback(null, vetted.address, vetted.family);
    };

    const remaining = timeoutMs - (Date.now() - started);
    if (remaining <= 0) throw fail('timeout', 'resolving the host took longer than allowed');

    return new Promise<MetadataFetchResponse>((resolve, reject) => {
      let settled = false;
      let response: IncomingMessage | undefined;
      const timers: ReturnType<typeof setTimeout>[] = [];
      const finish = (error: ClientMetadataDocumentError | undefined, result?: MetadataFetchResponse) => {
        if (settled) return;
        settled = true;
        for (const t of timers) clearTimeout(t);
        if (error !== undefined || result?.status !== 200) {
          response?.destroy();
          request.destroy();
        }
        if (error !== undefined) reject(error);
        else resolve(result!);
      };

      const request = node.https.request({
        host: target.host,
        port: target.port ?? 443,
        path: target.path + (target.query === undefined ? '' : `?${target.query}`),
        method: 'GET',
        headers: { accept: 'application/json', 'accept-encoding': 'identity', 'user-agent': userAgent },
        agent: false,
        lookup: pinned,
        family: vetted.family,
        maxHeaderSize: 16 * 1024,
        ...(target.hostKind === 'name' ? { servername: target.host } : {}),
        ...(ca === undefined ? {} : { ca }),
      });

      timers.push(
        setTimeout(
          () => finish(fail('timeout', `the document was not received within ${timeoutMs} ms`)),
          remaining,
        ),
        setTimeout(
          () => finish(fail('timeout', `the connection was not established within ${connectTimeoutMs} ms`)),
          Math.min(connectTimeoutMs, remaining),
        ),
      );
      const connectTimer = timers[1]!;

      request.on('socket', (socket: Socket) => {
        socket.once('secureConnect', () => {
          clearTimeout(connectTimer);
          // Defence in depth: the peer must be the address vetted above, whatever lookup ran.
          if (!sameAddress(socket.remoteAddress, vetted.address)) {
            finish(fail('forbidden_address', 'the connection reached an address other than the vetted one'));
          }
        });
      });
      request.on('error', (error) => finish(networkFailure(error)));
      request.on('response', (res) => {
        response = res;
        const base = {
          status: res.statusCode ?? 0,
          contentType: header(res.headers['content-type']),
          cacheControl: header(res.headers['cache-control']),
          remoteAddress: vetted.address,
        };
        if (base.status !== 200) {
          finish(undefined, { ...base, body: new Uint8Array(0) });
          return;
        }
        const encoding = header(res.headers['content-encoding']);
        if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
          finish(fail('invalid_document', 'the document is compressed, which is not accepted'));
          return;
        }
        const declared = res.headers['content-length'];
        if (declared !== undefined && Number(declared) > maxBytes) {
          finish(fail('too_large', `the document is larger than ${maxBytes} bytes`));
          return;
        }
        const chunks: Uint8Array[] = [];
        let size = 0;
        res.on('data', (chunk: Uint8Array) => {
          size += chunk.byteLength;
          if (size > maxBytes) {
            finish(fail('too_large', `the document is larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => finish(undefined, { ...base, body: concat(chunks, size) }));
        res.on('error', (error) => finish(networkFailure(error)));
        res.on('aborted', () =>
          finish(fail('fetch_failed', 'the connection closed before the document was complete')),
        );
      });
      request.end();
    });
  };
}
