/**
 * The storage conformance kit: one suite every {@link Storage} adapter runs, ours and third
 * parties', one file per aggregate plus the races and the housekeeping. It takes the test runner's
 * `describe`, `it` and `expect`, so it works with vitest, jest, or `node:test` plus a small
 * `expect`, and adds no dependency.
 * @module
 */
import type { Storage } from '../../storage/types.js';
import { clientsSuite } from './clients.js';
import { codesSuite } from './codes.js';
import { consentsSuite } from './consents.js';
import { expirySuite } from './expiry.js';
import { grantsSuite } from './grants.js';
import { interactionsSuite } from './interactions.js';
import { keysSuite } from './keys.js';
import { racesSuite } from './races.js';
import { replaySuite } from './replay.js';
import { type ConformanceRunner, createKit, type StorageConformanceOptions } from './runner.js';

export { fixtures } from './fixtures.js';
export {
  type StorageProcess,
  type StorageProcessOptions,
  serveStorage,
  startStorageProcess,
} from './process.js';
export type { ConformanceMatchers, ConformanceRunner, StorageConformanceOptions } from './runner.js';

/**
 * Registers the conformance suite for one {@link Storage} adapter: every method of every
 * aggregate, null versus throw, expiry at exactly `expiresAt`, tombstones, and the atomic steps
 * under parallel callers (one code redeemed by 50, one refresh token rotated by 20, a revocation
 * racing rotations, one pending authorization consumed by 50, one replay key stored by 50), split across two instances when
 * `createSecond` is given.
 *
 * @param runner - the test runner's `describe`, `it` and `expect`
 * @param options - how to create the storage under test (and a second instance of it)
 * @see RFC 6749 §4.1.2 and §10.5 (single-use codes), RFC 9700 §4.14.2 (refresh token rotation)
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest';
 * import { memoryStorage } from 'portcullis';
 * import { runStorageConformance } from 'portcullis/testing';
 *
 * runStorageConformance({ describe, it, expect }, { name: 'memory', create: () => memoryStorage() });
 * ```
 * @group Conformance Kit
 */
export function runStorageConformance(runner: ConformanceRunner, options: StorageConformanceOptions): void {
  const kit = createKit(runner, options);
  runner.describe(`storage conformance: ${options.name}`, () => {
    clientsSuite(kit);
    interactionsSuite(kit);
    codesSuite(kit);
    grantsSuite(kit);
    consentsSuite(kit);
    keysSuite(kit);
    replaySuite(kit);
    racesSuite(kit);
    expirySuite(kit);
  });
}
