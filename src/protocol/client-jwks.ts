/**
 * Validation of a client's public keys for `private_key_jwt`: the `jwks` and `jwks_uri` members of
 * dynamic registration and Client ID Metadata Documents, and the key set published at `jwks_uri`.
 *
 * Rules:
 * - a key set holds 1 to `maxKeys` keys, none with a private or symmetric member, each a supported
 *   public key (EC P-256/P-384, RSA 2048+, Ed25519), `kid`s unique, at least one usable to verify;
 * - registered `jwks` is strict (every key must be supported, the client can fix it on the spot); a
 *   published set at `jwks_uri` may also serve other purposes, so keys this server does not
 *   understand are ignored (RFC 7517 §5), but a private member anywhere refuses the whole set;
 * - `jwks` and `jwks_uri` together are refused (RFC 7591 §2); `jwks_uri` is an https URL by the
 *   raw-string grammar of `url.ts`, and never names a special-use IP literal.
 * @see RFC 7517 §5, RFC 7591 §2, RFC 7523 §2.2, OpenID Connect Registration §2,
 * draft-ietf-oauth-client-id-metadata-document-01 §6.5
 * @module
 */
import type { ClientIdUrl } from '../cimd/client-id.js';
import { addressRefusal } from '../cimd/special-use.js';
import type { AddressRange } from './ip-address.js';
import {
  keyVerifies,
  type PublicJwk,
  publicJwkProblem,
  SIGNATURE_ALGORITHMS,
  type SignatureAlgorithm,
} from './public-jwk.js';
import { parseHttpsUrl } from './url.js';

/**
 * A client's validated public key set.
 *
 * @example
 * ```ts
 * import type { ClientJwks } from 'portcullis';
 *
 * const jwks: ClientJwks = {
 *   keys: [{ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1' }],
 * };
 * ```
 * @see RFC 7517 §5
 * @group Client Authentication (RFC 7523)
 */
export interface ClientJwks {
  /** The keys, in the order published. */
  readonly keys: readonly PublicJwk[];
}

/**
 * Bounds and algorithms of key set validation.
 *
 * @example
 * ```ts
 * import type { ClientJwksRules } from 'portcullis';
 *
 * const rules: ClientJwksRules = { algorithms: ['ES256', 'EdDSA'], maxKeys: 5 };
 * ```
 * @see RFC 7517 §5, RFC 7591 §2
 * @group Client Authentication (RFC 7523)
 */
export interface ClientJwksRules {
  /** The algorithms a key may name. Default: every supported one. */
  readonly algorithms?: readonly SignatureAlgorithm[];
  /** The most keys in a set. Default 10. */
  readonly maxKeys?: number;
  /** The largest serialised set, in bytes of JSON. Default 16 384. */
  readonly maxBytes?: number;
}

/** Defaults of {@link ClientJwksRules}. */
export const CLIENT_JWKS_DEFAULTS = Object.freeze({
  maxKeys: 10,
  maxBytes: 16 * 1024,
});

/** Outcome of {@link clientJwksProblem}. */
export type ClientJwksResult =
  | { readonly ok: true; readonly jwks: ClientJwks }
  | { readonly ok: false; readonly problem: string };

/**
 * Validates a key set. `registration` (the `jwks` member a client sends) refuses any key this
 * server cannot use; `published` (the document at `jwks_uri`) skips such keys (RFC 7517 §5). Both
 * refuse private members, more than `maxKeys` keys, a larger set than `maxBytes`, repeated `kid`s
 * among the kept keys, and a set where no key can verify any of `algorithms`.
 *
 * @param value - the `jwks` value, as parsed from JSON
 * @param mode - `registration` (strict) or `published` (skip what is not understood)
 * @param rules - algorithms and bounds
 * @returns the kept keys, or the rule broken in words for an `error_description`
 * @see RFC 7517 §5, RFC 7591 §2
 * @example
 * ```ts
 * clientJwksProblem({ keys: [] }, 'registration'); // { ok: false, problem: 'jwks must hold 1 to 10 keys' }
 * ```
 */
export function clientJwksProblem(
  value: unknown,
  mode: 'registration' | 'published',
  rules: ClientJwksRules = {},
): ClientJwksResult {
  const algorithms = rules.algorithms ?? SIGNATURE_ALGORITHMS;
  const maxKeys = rules.maxKeys ?? CLIENT_JWKS_DEFAULTS.maxKeys;
  const maxBytes = rules.maxBytes ?? CLIENT_JWKS_DEFAULTS.maxBytes;
  const refuse = (problem: string): ClientJwksResult => ({ ok: false, problem });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return refuse('jwks must be a JSON object with a keys array (a JWK Set)');
  }
  const keys = (value as { keys?: unknown }).keys;
  if (!Array.isArray(keys)) return refuse('jwks must be a JSON object with a keys array (a JWK Set)');
  if (keys.length === 0 || keys.length > maxKeys) return refuse(`jwks must hold 1 to ${maxKeys} keys`);
  if (JSON.stringify(value).length > maxBytes) return refuse(`jwks must be at most ${maxBytes} bytes`);

  const kept: PublicJwk[] = [];
  const kids = new Set<string>();
  for (const [i, key] of keys.entries()) {
    const problem = publicJwkProblem(key, algorithms);
    if (problem !== undefined) {
      const isPrivate = problem.includes('private member');
      if (mode === 'registration' || isPrivate) return refuse(`jwks.keys[${i}]: ${problem}`);
      continue;
    }
    const jwk = key as PublicJwk;
    if (jwk.kid !== undefined) {
      if (kids.has(jwk.kid)) return refuse(`jwks.keys[${i}]: the kid '${printable(jwk.kid)}' is used twice`);
      kids.add(jwk.kid);
    }
    kept.push(jwk);
  }
  if (!kept.some((jwk) => algorithms.some((alg) => keyVerifies(jwk, alg)))) {
    return refuse(`jwks has no key that can verify ${algorithms.join(', ')} signatures`);
  }
  return { ok: true, jwks: { keys: kept } };
}

/** A `kid` as it may appear in a description: printable ASCII, short. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 40);
}

/** Outcome of {@link jwksUriProblem}. */
export type JwksUriResult =
  | { readonly ok: true; readonly target: ClientIdUrl }
  | { readonly ok: false; readonly problem: string };

/**
 * Checks a `jwks_uri`: an https URL by the raw-string grammar (no user info, fragment, dot
 * segments, odd host forms), and no special-use IP literal as host unless allowed. Host names are
 * vetted again by the fetcher when they are resolved.
 *
 * @param uri - the `jwks_uri` as received
 * @param allowedAddresses - special-use ranges that may be fetched anyway (tests, an intranet)
 * @returns the fetch target (its `clientId` member is the URI), or the rule broken
 * @see RFC 7591 §2, draft-ietf-oauth-client-id-metadata-document-01 §6.5
 * @example
 * ```ts
 * jwksUriProblem('http://app.example/jwks.json', []); // { ok: false, problem: 'jwks_uri must start with https://' }
 * ```
 */
export function jwksUriProblem(uri: unknown, allowedAddresses: readonly AddressRange[]): JwksUriResult {
  if (typeof uri !== 'string') return { ok: false, problem: 'jwks_uri must be a string' };
  const parsed = parseHttpsUrl(uri);
  if (!parsed.ok) return { ok: false, problem: `jwks_uri ${parsed.problem}` };
  if (parsed.url.hostKind !== 'name') {
    const refusal = addressRefusal(parsed.url.host, allowedAddresses);
    if (refusal !== undefined) return { ok: false, problem: `jwks_uri names a ${refusal} address` };
  }
  return { ok: true, target: { clientId: uri, ...parsed.url } };
}

/**
 * The key members of client metadata, validated for registration or a metadata document.
 *
 * @example
 * ```ts
 * const keys: ClientKeyMetadata = { jwks_uri: 'https://agent.example.com/.well-known/jwks.json' };
 * ```
 * @see RFC 7591 §2
 */
export interface ClientKeyMetadata {
  /** The keys, by value. */
  readonly jwks?: ClientJwks;
  /** Where the keys are published. */
  readonly jwks_uri?: string;
}

/**
 * Validates the `jwks` / `jwks_uri` members of client metadata. `private_key_jwt` needs exactly one
 * of them; other methods may carry `jwks_uri` (e.g. for other uses) but never both (RFC 7591 §2).
 *
 * @param metadata - the metadata object as received (only `token_endpoint_auth_method`, `jwks`, `jwks_uri` are read)
 * @param rules - algorithms, bounds and the special-use ranges allowed for `jwks_uri`
 * @returns the validated members (absent ones left out), or the rule broken
 * @see RFC 7591 §2, RFC 7523 §2.2
 * @example
 * ```ts
 * clientKeyMetadataProblem({ token_endpoint_auth_method: 'private_key_jwt' });
 * // { ok: false, problem: 'private_key_jwt needs jwks or jwks_uri' }
 * ```
 */
export function clientKeyMetadataProblem(
  metadata: Readonly<Record<string, unknown>>,
  rules: ClientJwksRules & { readonly allowedAddresses?: readonly AddressRange[] } = {},
):
  | { readonly ok: true; readonly keys: ClientKeyMetadata }
  | { readonly ok: false; readonly problem: string } {
  const { jwks, jwks_uri } = metadata;
  if (jwks !== undefined && jwks_uri !== undefined) {
    return { ok: false, problem: 'jwks and jwks_uri must not both be present' };
  }
  if (
    metadata.token_endpoint_auth_method === 'private_key_jwt' &&
    jwks === undefined &&
    jwks_uri === undefined
  ) {
    return { ok: false, problem: 'private_key_jwt needs jwks or jwks_uri' };
  }
  if (jwks !== undefined) {
    const result = clientJwksProblem(jwks, 'registration', rules);
    return result.ok ? { ok: true, keys: { jwks: result.jwks } } : result;
  }
  if (jwks_uri !== undefined) {
    const result = jwksUriProblem(jwks_uri, rules.allowedAddresses ?? []);
    return result.ok ? { ok: true, keys: { jwks_uri: result.target.clientId } } : result;
  }
  return { ok: true, keys: {} };
}
