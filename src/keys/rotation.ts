/**
 * Key rotation: a new key per algorithm is published now and signs once every cache of the JWKS
 * has seen it (ABU-10): after the JWKS cache lifetime plus the interval at which other instances
 * re-read the key set. The previous keys sign until then, and stay published until everything they
 * signed has expired. An immediate rotation (a compromised key) signs with the new keys at once.
 * @module
 */
import { type Clock, nowSeconds } from '../core/context.js';
import type { Storage } from '../storage/types.js';
import {
  generateSigningKey,
  type KeyStore,
  type KeyStoreOptions,
  publicationLeadSeconds,
  sealedRecord,
} from './key-store.js';

/**
 * Rotates the signing keys kept in `storage` and reloads `keys`.
 *
 * @param storage - where the keys live
 * @param keys - this instance's key store, reloaded afterwards
 * @param plan - the algorithms to generate keys for, and how long retired keys stay published
 * @param clock - epoch milliseconds
 * @param options - `immediate`: the new keys sign at once (a compromised key), unseen by caches
 * @throws TypeError when the keys come from `options.keys.privateJwks` (rotate them there)
 */
export async function rotateSigningKeys(
  storage: Storage,
  keys: KeyStore,
  plan: KeyStoreOptions,
  clock: Clock,
  options: { readonly immediate?: boolean } = {},
): Promise<void> {
  if (plan.privateJwks !== undefined) {
    throw new TypeError('keys come from options.keys.privateJwks: rotate them there');
  }
  await keys.refresh();
  const now = nowSeconds(clock);
  const activatesAt = options.immediate === true ? now : now + publicationLeadSeconds(plan);
  // New keys first: until they activate, the current ones sign, so no moment is without a key.
  const added = new Set<string>();
  for (const alg of plan.algs) {
    const record = await generateSigningKey(alg, now, activatesAt);
    added.add(record.kid);
    await storage.keys.add(await sealedRecord(record, plan.wrapping));
  }
  for (const record of await storage.keys.list()) {
    if (added.has(record.kid)) continue;
    if (record.retiresAt !== undefined || (record.expiresAt !== undefined && record.expiresAt <= now))
      continue;
    await storage.keys.update({
      ...record,
      retiresAt: activatesAt,
      expiresAt: activatesAt + plan.retentionSeconds,
    });
  }
  await keys.refresh();
}
