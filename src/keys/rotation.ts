/**
 * Key rotation: a new key per algorithm signs from now on; the previous keys retire now and stay
 * published until everything they signed has expired. Other instances pick the new keys up when
 * they next read the key set (`keys.refreshIntervalSeconds`, or at once on an unknown `kid`).
 * @module
 */
import { type Clock, nowSeconds } from '../core/context.js';
import type { Storage } from '../storage/types.js';
import { generateSigningKey, type KeyStore, type KeyStoreOptions } from './key-store.js';

/**
 * Rotates the signing keys kept in `storage` and reloads `keys`.
 *
 * @param storage - where the keys live
 * @param keys - this instance's key store, reloaded afterwards
 * @param plan - the algorithms to generate keys for, and how long retired keys stay published
 * @param clock - epoch milliseconds
 * @throws TypeError when the keys come from `options.keys.privateJwks` (rotate them there)
 */
export async function rotateSigningKeys(
  storage: Storage,
  keys: KeyStore,
  plan: KeyStoreOptions,
  clock: Clock,
): Promise<void> {
  if (plan.privateJwks !== undefined) {
    throw new TypeError('keys come from options.keys.privateJwks: rotate them there');
  }
  await keys.refresh();
  const now = nowSeconds(clock);
  for (const record of await storage.keys.list()) {
    if (record.retiresAt !== undefined || (record.expiresAt !== undefined && record.expiresAt <= now))
      continue;
    await storage.keys.update({ ...record, retiresAt: now, expiresAt: now + plan.retentionSeconds });
  }
  for (const alg of plan.algs) {
    await storage.keys.add(await generateSigningKey(alg, now));
  }
  await keys.refresh();
}
