/**
 * The shape of {@link Storage} at run time, for validating what a host passes as `storage`.
 * @module
 */
import type { Storage } from './contract/storage.js';

/** Every method of every store of the contract, by store (the conformance kit's process proxy uses it too). */
export const STORAGE_SHAPE = {
  clients: ['create', 'get', 'clearExpiry', 'delete'],
  interactions: ['create', 'get', 'bind', 'consume', 'complete'],
  codes: ['create', 'get', 'redeem'],
  grants: [
    'get',
    'listByUser',
    'revoke',
    'getAccessToken',
    'addAccessToken',
    'revokeAccessToken',
    'getRefreshToken',
    'rotateRefreshToken',
  ],
  consents: ['get', 'save', 'delete'],
  keys: ['list', 'add', 'update'],
  replay: ['checkAndStore'],
} as const satisfies { readonly [K in keyof Storage]?: readonly string[] };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

/**
 * What `value` lacks to be a {@link Storage}: the paths of its missing methods (`grants.revoke`,
 * `deleteExpired`), empty when it has them all.
 *
 * @param value - what the host passed
 * @returns the missing method paths, in contract order
 * @example
 * ```ts
 * missingStorageMethods({}); // ['clients.create', ..., 'deleteExpired', 'close']
 * ```
 */
export function missingStorageMethods(value: unknown): string[] {
  if (!isObject(value)) return ['(not an object)'];
  const missing: string[] = [];
  for (const [store, methods] of Object.entries(STORAGE_SHAPE)) {
    const target = value[store];
    for (const method of methods) {
      if (!isObject(target) || typeof target[method] !== 'function') missing.push(`${store}.${method}`);
    }
  }
  for (const method of ['deleteExpired', 'close']) {
    if (typeof value[method] !== 'function') missing.push(method);
  }
  return missing;
}
