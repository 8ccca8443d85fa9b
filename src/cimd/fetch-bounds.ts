/**
 * What inbound junk may cost in outbound fetches of metadata documents (ABU-04): failures
 * remembered briefly per URL and per host, a global cap on concurrent fetches, a share of it and a
 * budget per minute for each client address, a budget of fetches per host and minute, and an
 * exemption from the host's budget for documents that were valid before. The resolver asks before
 * each fetch and reports each outcome.
 *
 * - A failure is remembered for `failureMs`: per URL always, per host name when no response came
 *   back (the host failed, not the document). It is answered from memory; it is never a cached
 *   document (CIMD-09) and expires quickly, so a fixed document works once it has (ATK-41).
 * - At most `maxConcurrent` fetches run at once, and `perHostPerMinute` start per host name (any
 *   port) and minute; beyond either, `503 temporarily_unavailable` with `Retry-After`, nothing
 *   remembered.
 * - A client address (the rate-limit key of the request that needs the fetch: IPv6 by prefix) has
 *   at most `perAddressConcurrent` of those fetches running and starts at most
 *   `perAddressPerMinute` a minute; beyond, `429 too_many_requests` with `Retry-After`. Random
 *   subdomains escape the per-host budget, never this one: one address cannot hold most of the
 *   global slots, nor spend other addresses' share of a host's budget. A request without an
 *   address is not counted per address (as with the rate limits).
 * - A URL whose document was valid in the last 24 hours skips its host's budget and remembered
 *   failure: a stranger's junk naming other URLs of a host cannot keep that host's clients out.
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4.4, §6.5, §6.6
 * @module
 */
import { OAuthError } from '../core/errors.js';
import { WindowTable } from '../rate-limit/window-table.js';
import { ExpiringLruCache } from './cache.js';
import type { ClientIdUrl } from './client-id.js';
import { ClientMetadataDocumentError, type ClientMetadataDocumentProblem } from './errors.js';

/** Hosts, failures and known-good documents remembered at most, each (least recently used first out). */
const MAX_TRACKED = 10_000;
/** How long a document that was valid once keeps its exemption from host budgets and failures. */
const KNOWN_GOOD_MS = 24 * 3600 * 1000;
/** Problems where no response came back: the host, not the document, failed. */
const HOST_PROBLEMS: ReadonlySet<ClientMetadataDocumentProblem> = new Set([
  'fetch_failed',
  'timeout',
  'forbidden_address',
]);

/** A remembered failure, answered from memory until it expires. */
interface Failure {
  readonly problem: ClientMetadataDocumentProblem;
  readonly reason: string;
}

/** The bounds, in the units the resolver has. */
export interface FetchBoundsOptions {
  readonly maxConcurrent: number;
  readonly perHostPerMinute: number;
  readonly perAddressConcurrent: number;
  readonly perAddressPerMinute: number;
  /** 0 remembers nothing. */
  readonly failureMs: number;
  /** Retry-After for a refusal at the global cap: about one fetch's time budget. */
  readonly busySeconds: number;
}

/** One fetch admitted by {@link FetchBounds.admit}; report its outcome exactly once. */
export interface AdmittedFetch {
  /** The document was valid: its URL becomes known good. */
  succeeded(now: number): void;
  /** The fetch or the document failed: remembered when `error` is given, only released otherwise. */
  failed(error: ClientMetadataDocumentError | undefined, now: number): void;
}

/** The bounds of one resolver. */
export interface FetchBounds {
  /**
   * Throws the remembered failure of `target` (its URL, or its host unless the URL is known good),
   * a 429 when the fetch would pass the share or the budget of `clientAddress`, or a 503 when it
   * would pass the global cap or the host's budget; else counts the fetch.
   *
   * @param clientAddress - the rate-limit key of the request that needs the fetch, if known
   * @throws ClientMetadataDocumentError a remembered failure
   * @throws OAuthError `too_many_requests` (429) or `temporarily_unavailable` (503), with `Retry-After`
   */
  admit(target: ClientIdUrl, now: number, clientAddress?: string): AdmittedFetch;
}

function busy(description: string, retryAfterSeconds: number): OAuthError {
  return refusal('temporarily_unavailable', description, retryAfterSeconds);
}

function refusal(
  code: 'temporarily_unavailable' | 'too_many_requests',
  description: string,
  retryAfterSeconds: number,
): OAuthError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new OAuthError(code, `${description}; try again in ${seconds} seconds`, {
    headers: { 'retry-after': String(seconds) },
  });
}

/**
 * Creates the bounds of a resolver (see the module documentation).
 *
 * @param options - cap, per-address share and budget, per-host budget, failure memory, Retry-After at the cap
 * @returns the bounds
 */
export function createFetchBounds(options: FetchBoundsOptions): FetchBounds {
  const failedUrls = new ExpiringLruCache<Failure>(MAX_TRACKED);
  const failedHosts = new ExpiringLruCache<Failure>(MAX_TRACKED);
  const knownGood = new ExpiringLruCache<true>(MAX_TRACKED);
  const hostBudget = new WindowTable(MAX_TRACKED);
  const addressBudget = new WindowTable(MAX_TRACKED);
  // Fetches running per address: at most `maxConcurrent` entries, each deleted when it drops to 0.
  const runningByAddress = new Map<string, number>();
  let running = 0;

  return {
    admit(target, now, clientAddress) {
      const trusted = knownGood.get(target.clientId, now) !== undefined;
      const failure =
        failedUrls.get(target.clientId, now) ?? (trusted ? undefined : failedHosts.get(target.host, now));
      if (failure !== undefined) throw new ClientMetadataDocumentError(failure.problem, failure.reason);
      const ownRunning = clientAddress === undefined ? 0 : (runningByAddress.get(clientAddress) ?? 0);
      if (ownRunning >= options.perAddressConcurrent) {
        throw refusal(
          'too_many_requests',
          'too many client metadata documents are being fetched for this address',
          options.busySeconds,
        );
      }
      if (running >= options.maxConcurrent) {
        throw busy('too many client metadata documents are being fetched', options.busySeconds);
      }
      if (clientAddress !== undefined) {
        // Counted before the host's budget: one address's junk cannot spend what other addresses share.
        const window = addressBudget.count(
          clientAddress,
          { points: options.perAddressPerMinute, durationMs: 60_000, overflow: 'address' },
          now,
        );
        if (window.count > options.perAddressPerMinute) {
          throw refusal(
            'too_many_requests',
            'too many client metadata documents were requested from this address',
            (window.start + window.durationMs - now) / 1000,
          );
        }
      }
      if (!trusted) {
        const window = hostBudget.count(
          target.host,
          { points: options.perHostPerMinute, durationMs: 60_000, overflow: 'host' },
          now,
        );
        if (window.count > options.perHostPerMinute) {
          throw busy(
            `too many client metadata documents were fetched from ${target.host}`,
            (window.start + window.durationMs - now) / 1000,
          );
        }
      }
      running++;
      if (clientAddress !== undefined) runningByAddress.set(clientAddress, ownRunning + 1);
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        running--;
        if (clientAddress !== undefined) {
          const left = (runningByAddress.get(clientAddress) ?? 1) - 1;
          if (left > 0) runningByAddress.set(clientAddress, left);
          else runningByAddress.delete(clientAddress);
        }
        return true;
      };
      return {
        succeeded(at) {
          if (settle()) knownGood.set(target.clientId, true, at + KNOWN_GOOD_MS);
        },
        failed(error, at) {
          if (!settle() || error === undefined || options.failureMs <= 0) return;
          const remembered: Failure = { problem: error.problem, reason: error.reason };
          failedUrls.set(target.clientId, remembered, at + options.failureMs);
          if (HOST_PROBLEMS.has(error.problem))
            failedHosts.set(target.host, remembered, at + options.failureMs);
        },
      };
    },
  };
}
