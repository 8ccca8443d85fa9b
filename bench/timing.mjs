#!/usr/bin/env node
/**
 * Does the token endpoint's timing tell whether a `client_id` exists? (issue 16, item 8.) A
 * statistical benchmark, not a unit test: it sends many interleaved failing token requests, half
 * naming a client that exists and half one that does not, in a random order, straight to the
 * server's handler (no network: the strictest setting, since network jitter only hides a
 * difference), and compares the two latency distributions:
 * - the Mann-Whitney U test (normal approximation, ties corrected): are the distributions shifted?
 * - the Hodges-Lehmann-style median difference with a bootstrap 95% confidence interval.
 * The pair measured: a confidential client with a wrong secret against an unknown id with a
 * secret. Both answer the same `invalid_client` body; only the timing could differ. (A public
 * client's id is public, and an unknown one is `invalid_client` where a known one's bad code is
 * `invalid_grant`, by RFC 6749 §5.2: nothing for timing to reveal.)
 *
 * Verdict: LEAK when the shift is significant (p < 0.001) and the median difference is
 * larger than 5% of the median and 10 µs (smaller differences are below what reaches an attacker
 * through a network and a TLS proxy); otherwise PASS. The exit code is 1 on a LEAK.
 *
 * Usage: `node bench/timing.mjs [--samples 4000] [--seed 16] [--storage memory,sqlite] [--json]`
 * (`npm run bench:timing`).
 * Needs the built library (`npm run build`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    samples: { type: 'string', default: '4000' },
    seed: { type: 'string', default: '16' },
    json: { type: 'boolean', default: false },
    storage: { type: 'string', default: 'memory,sqlite' },
  },
});
const SAMPLES = Number(args.samples);
const WARMUP = Math.min(500, SAMPLES);

const { createAuthorizationServer, memoryStorage, silentLogger } = await import('../dist/index.js');

/** A small seeded PRNG (mulberry32), so that the order of requests is reproducible. */
function prng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(Number(args.seed));

/** @param {readonly number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Standard normal upper tail, by the complementary error function (Abramowitz-Stegun 7.1.26). */
function normalTail(z) {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erfc =
    t *
    (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) *
    Math.exp(-x * x);
  return erfc / 2;
}

/**
 * Mann-Whitney U of `a` against `b`, with the two-sided p-value of its normal approximation
 * (ties corrected) and the probability that a value of `a` exceeds one of `b` (0.5: no shift).
 */
function mannWhitney(a, b) {
  const all = [...a.map((v) => [v, 0]), ...b.map((v) => [v, 1])].sort((x, y) => x[0] - y[0]);
  const ranks = new Array(all.length);
  let tieTerm = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j + 1 < all.length && all[j + 1][0] === all[i][0]) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[k] = rank;
    const ties = j - i + 1;
    tieTerm += ties ** 3 - ties;
    i = j + 1;
  }
  let rankSumA = 0;
  all.forEach(([, group], i) => {
    if (group === 0) rankSumA += ranks[i];
  });
  const n1 = a.length;
  const n2 = b.length;
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const mean = (n1 * n2) / 2;
  const n = n1 + n2;
  const variance = ((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1)));
  const z = (u - mean) / Math.sqrt(variance);
  return { u, z, p: Math.min(1, 2 * normalTail(z)), probabilityGreater: u / (n1 * n2) };
}

/** Bootstrap 95% interval of median(a) - median(b). */
function bootstrapMedianDifference(a, b, rounds = 2000) {
  const pick = (values) => {
    const out = new Array(values.length);
    for (let i = 0; i < values.length; i++) out[i] = values[Math.floor(random() * values.length)];
    return out;
  };
  const differences = [];
  for (let r = 0; r < rounds; r++) differences.push(median(pick(a)) - median(pick(b)));
  differences.sort((x, y) => x - y);
  return [differences[Math.floor(rounds * 0.025)], differences[Math.floor(rounds * 0.975)]];
}

const ISSUER = 'https://auth.example.com';
const CALLBACK = 'http://127.0.0.1:49152/callback';

/** The storages measured: the client lookup of an unknown id reaches storage, a known one may be cached. */
async function openStorage(name) {
  if (name === 'memory') return { storage: memoryStorage(), cleanup: async () => {} };
  if (name === 'sqlite') {
    const { sqliteStorage } = await import('../dist/sqlite.js');
    const dir = mkdtempSync(join(tmpdir(), 'pc-timing-'));
    const storage = sqliteStorage({ path: join(dir, 'auth.db') });
    return {
      storage,
      cleanup: async () => {
        await storage.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  throw new Error(`unknown storage ${name} (memory, sqlite)`);
}

/**
 * Two settings: the default client cache (both ids looked up once, then answered from the cache
 * for its window), and no cache (`clientCacheSeconds: 0`) with a fresh unknown id per request: what
 * an attacker probing many candidate ids meets on each first probe, every lookup reaching storage.
 */
const SETTINGS = [
  { name: 'cached', options: {}, freshUnknown: false },
  { name: 'active client vs new ids', options: {}, freshUnknown: true },
  { name: 'first lookup', options: { clientCacheSeconds: 0 }, freshUnknown: true },
];

const results = [];
for (const storageName of args.storage.split(','))
  for (const setting of SETTINGS) {
    const { storage, cleanup } = await openStorage(storageName);
    const server = await createAuthorizationServer({
      issuer: ISSUER,
      storage,
      logger: silentLogger,
      housekeepingIntervalSeconds: 0,
      ...setting.options,
    });

    /** Registers a client; returns its id and secret (none for a public client). */
    async function register(authMethod) {
      const response = await server.handle({
        method: 'POST',
        url: '/oauth/register',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [CALLBACK], token_endpoint_auth_method: authMethod }),
      });
      const body = JSON.parse(response.body);
      if (response.status !== 201) throw new Error(`registration failed: ${response.body}`);
      return { id: body.client_id, secret: body.client_secret };
    }

    const confidential = await register('client_secret_post');
    const unknownId = (known) => `${known.slice(0, -6)}zzzzzz`; // same length and shape, never registered
    let fresh = 0;
    /** A never-registered id of the same length and shape, a new one per call. */
    const freshUnknownId = (known) => `${known.slice(0, -8)}${(fresh++).toString(36).padStart(8, 'z')}`;

    /** A failing token request: an authorization code that does not exist. */
    function tokenRequest(clientId, secret) {
      const body = new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'c'.repeat(43),
        redirect_uri: CALLBACK,
        code_verifier: 'v'.repeat(43),
        client_id: clientId,
        ...(secret === undefined ? {} : { client_secret: secret }),
      }).toString();
      return {
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
        remoteAddress: '203.0.113.9',
      };
    }

    const PAIRS = [
      {
        name: 'confidential client: wrong secret vs unknown client_id',
        existing: () => tokenRequest(confidential.id, 'x'.repeat(43)),
        unknown: setting.freshUnknown
          ? () => tokenRequest(freshUnknownId(confidential.id), 'x'.repeat(43))
          : () => tokenRequest(unknownId(confidential.id), 'x'.repeat(43)),
      },
    ];
    // Not measured: a public client's id is public (its metadata, every install), and RFC 6749 §5.2
    // answers an unknown id `invalid_client` but a bad code of a known one `invalid_grant`, so its
    // existence is in the body, by design.

    async function timed(request) {
      const started = performance.now();
      const response = await server.handle(request);
      const elapsed = performance.now() - started;
      return { microseconds: elapsed * 1000, status: response.status, body: response.body };
    }

    for (const pair of PAIRS) {
      const samples = { existing: [], unknown: [] };
      const answers = { existing: new Set(), unknown: new Set() };
      for (let i = 0; i < WARMUP + SAMPLES; i++) {
        // Each round sends both, in a random order: drift of the machine affects both alike.
        const order = random() < 0.5 ? ['existing', 'unknown'] : ['unknown', 'existing'];
        for (const side of order) {
          const { microseconds, status, body } = await timed(pair[side]());
          if (i >= WARMUP) samples[side].push(microseconds);
          answers[side].add(`${status} ${body}`);
        }
      }
      const test = mannWhitney(samples.existing, samples.unknown);
      const [low, high] = bootstrapMedianDifference(samples.existing, samples.unknown);
      const existingMedian = median(samples.existing);
      const unknownMedian = median(samples.unknown);
      const difference = existingMedian - unknownMedian;
      const threshold = Math.max(10, 0.05 * Math.min(existingMedian, unknownMedian));
      const leak = test.p < 0.001 && Math.abs(difference) > threshold && (low > 0 || high < 0);
      results.push({
        storage: storageName,
        pair: `${setting.name}: ${pair.name}`,
        samples: SAMPLES,
        existingMedianMicroseconds: existingMedian,
        unknownMedianMicroseconds: unknownMedian,
        medianDifferenceMicroseconds: difference,
        bootstrap95: [low, high],
        mannWhitneyZ: test.z,
        mannWhitneyP: test.p,
        probabilityExistingSlower: test.probabilityGreater,
        sameAnswers: [...answers.existing].join() === [...answers.unknown].join(),
        answer: [...answers.existing][0]?.slice(0, 80),
        verdict: leak ? 'LEAK' : 'PASS',
      });
    }
    await server.close();
    await cleanup();
  }

const fmt = (value, digits = 1) => value.toFixed(digits);
if (args.json) {
  console.log(JSON.stringify({ node: process.version, seed: Number(args.seed), results }, null, 2));
} else {
  console.log(
    `token-endpoint timing by client_id existence (node ${process.version}, ${SAMPLES} samples per side, seed ${args.seed})`,
  );
  console.log(
    '| storage | pair | median existing (µs) | median unknown (µs) | difference (95% CI) | Mann-Whitney p | P(existing slower) | same answer | verdict |',
  );
  console.log('| --- | --- | ---: | ---: | --- | ---: | ---: | --- | --- |');
  for (const r of results) {
    console.log(
      `| ${r.storage} | ${r.pair} | ${fmt(r.existingMedianMicroseconds)} | ${fmt(r.unknownMedianMicroseconds)} | ${fmt(r.medianDifferenceMicroseconds)} (${fmt(r.bootstrap95[0])} to ${fmt(r.bootstrap95[1])}) | ${r.mannWhitneyP.toPrecision(2)} | ${fmt(r.probabilityExistingSlower, 3)} | ${r.sameAnswers ? 'yes' : 'NO'} | ${r.verdict} |`,
    );
  }
}
process.exitCode = results.some((r) => r.verdict === 'LEAK' || !r.sameAnswers) ? 1 : 0;
