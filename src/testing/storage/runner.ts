/**
 * What the kit needs from a test runner and from the adapter under test, and the small harness
 * every suite of the kit shares.
 * @module
 */
import type { AccessTokenRecord, GrantRecord, RefreshTokenRecord, Storage } from '../../storage/types.js';
import { fixtures } from './fixtures.js';

/**
 * The matchers the kit uses; vitest's and jest's `expect` provide them.
 *
 * @example
 * ```ts
 * import { expect } from 'vitest';
 * import type { ConformanceMatchers } from 'portcullis/testing';
 *
 * const matchers: ConformanceMatchers = expect(42);
 * ```
 * @see docs/storage.md, "Writing and testing another adapter"
 * @group Conformance Kit
 */
export interface ConformanceMatchers {
  /** Same value (`Object.is`). */
  toBe(expected: unknown): void;
  /** Deep equality of plain data. */
  toEqual(expected: unknown): void;
  /** The value is `null`. */
  toBeNull(): void;
  /** The value is `undefined`. */
  toBeUndefined(): void;
  /** An array (or string) of this length. */
  toHaveLength(length: number): void;
  /** An array that contains `item`. */
  toContain(item: unknown): void;
  /** A number greater than `n`. */
  toBeGreaterThan(n: number): void;
}

/**
 * The test-runner functions the kit needs: vitest's or jest's `describe`, `it` and `expect` fit.
 *
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest';
 * import type { ConformanceRunner } from 'portcullis/testing';
 *
 * const runner: ConformanceRunner = { describe, it, expect };
 * ```
 * @see docs/storage.md, "Writing and testing another adapter"
 * @group Conformance Kit
 */
export interface ConformanceRunner {
  /** Declares a group of tests. */
  describe(name: string, body: () => void): void;
  /** Declares one test; `timeout` in milliseconds. */
  it(name: string, body: () => Promise<void>, timeout?: number): void;
  /** Starts an assertion about `actual`; `.not` negates it. */
  expect(actual: unknown): ConformanceMatchers & { not: ConformanceMatchers };
}

/**
 * How the kit obtains the adapter under test, and optionally a second instance of it over the
 * same data, against which every race test splits its callers.
 *
 * @example
 * ```ts
 * import { pgliteStorage } from 'portcullis/pglite';
 * import type { StorageConformanceOptions } from 'portcullis/testing';
 *
 * const shared = pgliteStorage(); // one in-memory database for every test: the tests use random ids
 * const options: StorageConformanceOptions = { name: 'pglite', create: () => shared, concurrency: 20 };
 * ```
 * @see RFC 6749 §10.5 and RFC 9700 §4.14.2 (the atomic steps the kit checks under concurrency)
 * @group Conformance Kit
 */
export interface StorageConformanceOptions {
  /** Shown in test names. */
  name: string;
  /** Returns a ready storage. Called once per test; may return the same shared instance. */
  create(): Storage | Promise<Storage>;
  /**
   * Returns a second instance over the same data as `first` (what `create` returned): a storage
   * on a second connection pool, a second storage object over the same database, or a storage in
   * another process (`startStorageProcess`, whose child calls `serveStorage`). When given, every
   * race test sends half of its callers to each instance, as two servers behind a load balancer
   * would. Called once per race test.
   */
  createSecond?(first: Storage): Storage | Promise<Storage>;
  /** Called after each test with each storage `create` and `createSecond` returned (close it, or leave it shared). */
  release?(storage: Storage): void | Promise<void>;
  /** Parallel callers in the races on codes and pending authorizations (default 50); refreshes use at most 20. */
  concurrency?: number;
}

/** What a suite body gets: the storage, and the instance its race callers alternate with. */
export interface KitStorages {
  readonly storage: Storage;
  /** The second instance, or `storage` itself when the options give none. */
  readonly second: Storage;
  /** `storage` for even `i`, `second` for odd. */
  at(i: number): Storage;
}

/** The harness the suites share. */
export interface Kit {
  readonly runner: ConformanceRunner;
  readonly options: StorageConformanceOptions;
  /** Parallel callers of the code and interaction races. */
  readonly parallel: number;
  /** Parallel callers of the refresh races. */
  readonly parallelRefreshes: number;
  /** Whether the races span two instances. */
  readonly twoInstances: boolean;
  /** Declares a test that gets a storage (and, for races, a second instance). */
  test(name: string, body: (s: KitStorages) => Promise<void>): void;
  /** Expects `promise` to reject. */
  rejects(promise: Promise<unknown>): Promise<void>;
  /** Redeems a fresh code into a grant with one access and one refresh token; returns them. */
  seedGrant(
    storage: Storage,
    overrides?: Partial<GrantRecord>,
  ): Promise<{ grant: GrantRecord; accessToken: AccessTokenRecord; refreshToken: RefreshTokenRecord }>;
}

/** Builds the harness for one run of the kit. */
export function createKit(runner: ConformanceRunner, options: StorageConformanceOptions): Kit {
  const { expect } = runner;
  const parallel = options.concurrency ?? 50;

  async function withStorages(body: (s: KitStorages) => Promise<void>): Promise<void> {
    const storage = await options.create();
    let second: Storage | undefined;
    try {
      second = options.createSecond === undefined ? undefined : await options.createSecond(storage);
      const other = second ?? storage;
      await body({ storage, second: other, at: (i) => (i % 2 === 0 ? storage : other) });
    } finally {
      if (second !== undefined) await options.release?.(second);
      await options.release?.(storage);
    }
  }

  return {
    runner,
    options,
    parallel,
    parallelRefreshes: Math.min(parallel, 20),
    twoInstances: options.createSecond !== undefined,
    test: (name, body) => runner.it(name, () => withStorages(body), 60_000),
    async rejects(promise) {
      let threw = false;
      try {
        await promise;
      } catch {
        threw = true;
      }
      expect(threw).toBe(true);
    },
    async seedGrant(storage, overrides = {}) {
      const code = fixtures.code({ grantId: overrides.grantId ?? fixtures.grant().grantId });
      await storage.codes.create(code);
      const grant = fixtures.grant({ ...overrides, grantId: code.grantId });
      const accessToken = fixtures.accessToken(grant);
      const refreshToken = fixtures.refreshToken(grant);
      const result = await storage.codes.redeem({
        codeHash: code.codeHash,
        grant,
        accessToken,
        refreshToken,
        now: code.createdAt,
      });
      expect(result).toEqual({ outcome: 'redeemed' });
      return { grant, accessToken, refreshToken };
    },
  };
}
