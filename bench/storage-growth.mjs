/**
 * Storage cost as the tables grow (FLT-05): do the storage steps of a refresh and of a UserInfo
 * request cost the same on a store that has issued 1,000,000 tokens as on a fresh one?
 *
 * Two stores of one backend side by side: FRESH (empty) and GROWN (filled directly with bulk SQL:
 * `--tokens` tokens of `--tokens / 4` grants, each with a rotated and a live refresh token and two
 * access tokens, none expired, so the housekeeping cannot shrink them: the worst case). Then, in
 * alternating windows (fresh, grown, fresh, grown, ...), `--concurrency` clients each run one of:
 * - `refresh`: `grants.getRefreshToken` then `grants.rotateRefreshToken` (what a refresh asks of
 *   storage: two statements), each client on its own chain;
 * - `userinfo`: `grants.getAccessToken` (the revocation check of every protected request).
 * CPU per operation is this process's CPU (the driver, and for an embedded backend the database
 * itself) plus, for PostgreSQL, its backends serving that store. The ratio is grown ÷ fresh, the
 * median over adjacent window pairs; the target is at most 1.10.
 *
 * Then the purge: `--expired` tokens already past their expiry are added to the grown store, and
 * `deleteExpired` removes them in batches while the refresh clients keep running; reported are the
 * rows per second and the refresh latency during the purge against before it (short batches, no
 * long locks).
 *
 * The rest of a request (HTTP, client authentication, signatures) does not depend on the size of
 * the tables, so the storage steps alone are measured: a stricter test of flatness than the whole
 * request, whose larger cost would dilute any growth.
 *
 * Usage: `npm run build && node bench/storage-growth.mjs [--backend postgres|pglite|sqlite]
 * [--tokens 1000000] [--expired 200000] [--windows 5] [--seconds 3] [--concurrency 8] [--delete-batch 1000]
 * [--database-url postgres://...] [--json file]`. A backend is a few functions in BACKENDS below:
 * opening a store, the bulk SQL that grows it, and where its CPU is spent. `--json` also writes the
 * figures to a file (`npm run bench` runs this script that way and reports its targets).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { processCpuSeconds } from './lib/proc.mjs';

const { values: args } = parseArgs({
  options: {
    backend: { type: 'string', default: 'postgres' },
    tokens: { type: 'string', default: '1000000' },
    expired: { type: 'string', default: '200000' },
    windows: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '8' },
    'delete-batch': { type: 'string', default: '1000' },
    'database-url': { type: 'string' },
    json: { type: 'string' },
  },
});
const TOKENS = Number(args.tokens);
const EXPIRED = Number(args.expired);
const WINDOWS = Number(args.windows);
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const DELETE_BATCH = Number(args['delete-batch']);
const DATABASE_URL =
  args['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const nowSeconds = () => Math.floor(Date.now() / 1000);
const hash = () => randomBytes(32).toString('base64url');

// A token's storage key, as the server makes it (src/tokens/token-key.ts): the time the token was
// made in eight digits of an alphabet in byte order (src/core/crypto.ts, timeOrderedId), then the
// SHA-256 of the token, as random as the 43 characters below.
const ORDERED_DIGITS = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
const TIME_OFFSET = ORDERED_DIGITS.indexOf('A') * 64 ** 7;
/** The key of a token made now. */
const tokenKeyNow = () => {
  let t = TIME_OFFSET + Date.now();
  let time = '';
  for (let i = 0; i < 8; i++) {
    time = ORDERED_DIGITS[t % 64] + time;
    t = Math.floor(t / 64);
  }
  return time + hash();
};
/**
 * The same eight digits in SQL (PostgreSQL and SQLite alike), of `ms`, an SQL expression of epoch
 * milliseconds.
 * @param {string} ms
 */
const sqlTimeDigits = (ms) =>
  Array.from(
    { length: 8 },
    (_, k) =>
      `substr('${ORDERED_DIGITS}', CAST(((${TIME_OFFSET} + ${ms}) / ${64 ** (7 - k)}) % 64 AS integer) + 1, 1)`,
  ).join(' || ');
/**
 * The issue time, in epoch milliseconds, of the `i`-th of `count` grown grants (an SQL
 * expression): spread over the 30 days before `now`, in order, as a server issuing them would.
 */
const grownMs = (now, count, i = 'i') =>
  `(${now * 1000} - CAST(${count} - ${i} AS bigint) * ${Math.floor((30 * 86_400_000) / count)})`;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? Number.NaN
    : s.length % 2
      ? s[(s.length - 1) / 2]
      : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * The bulk SQL that makes a store look as if it had issued `tokens` tokens: grants of a thousand
 * clients and a hundred thousand users, each with a rotated refresh token, its live successor, and
 * two access tokens. Their keys are as the server makes them: the time (spread over the last 30
 * days, before any token the measurement makes), then a SHA-256 digest. `expiresIn` < 0 makes
 * them all expired (for the purge).
 * @param {string} s - the quoted schema
 * @param {number} tokens
 * @param {number} now - epoch seconds
 * @param {string} tag - distinguishes the ids of several calls
 * @param {number} expiresIn - seconds from now to the tokens' expiry
 */
function growthSql(s, tokens, now, tag, expiresIn) {
  const grants = Math.floor(tokens / 4);
  const series = `generate_series(1, ${grants}) AS i`;
  const digest = (kind) =>
    `${sqlTimeDigits(grownMs(now, grants))} || rtrim(translate(encode(sha256(convert_to('${tag}-${kind}-' || i, 'UTF8')), 'base64'), '+/', '-_'), '=')`;
  const owner = `'g-${tag}-' || i, 'client-' || (i % 1000), 'user-' || (i % 100000), '{openid,email}', '{https://as.example}'`;
  const grantExpiry = expiresIn < 0 ? now + expiresIn : now + 90 * 86400;
  const refresh = (kind, rotated) =>
    `INSERT INTO ${s}.refresh_tokens (token_hash, grant_id, client_id, user_id, scope, resources, issued_at, expires_at, rotated_at, successor_hash)
     SELECT ${digest(kind)}, ${owner}, ${now - 3600}, ${now + expiresIn},
            ${rotated ? `${now - 1800}, ${digest('r2')}` : 'NULL, NULL'} FROM ${series}`;
  const access = (kind) =>
    `INSERT INTO ${s}.access_tokens (token_hash, jti, grant_id, client_id, user_id, scope, audience, issued_at, expires_at)
     SELECT ${digest(kind)}, 'jti-${tag}-${kind}-' || i, ${owner}, ${now - 1800}, ${now + Math.min(expiresIn, 3600)} FROM ${series}`;
  return [
    `INSERT INTO ${s}.grants (grant_id, client_id, user_id, scope, resources, auth_time, created_at, expires_at)
     SELECT ${owner}, ${now - 3600}, ${now - 3600}, ${grantExpiry} FROM ${series}`,
    refresh('r1', true),
    refresh('r2', false),
    access('a1'),
    access('a2'),
  ];
}

/**
 * {@link growthSql} for SQLite's tables (`portcullis_*`, lists as JSON text). SQLite has no
 * SHA-256: the digests after the time are random (`randomblob`), 43 characters as real ones, and
 * each rotated token names its live successor by reading it back (the successors are inserted
 * first).
 * @param {number} tokens
 * @param {number} now - epoch seconds
 * @param {string} tag - distinguishes the ids of several calls
 * @param {number} expiresIn - seconds from now to the tokens' expiry
 */
function sqliteGrowthSql(tokens, now, tag, expiresIn) {
  const grants = Math.floor(tokens / 4);
  const series = `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${grants})`;
  const digestAt = (i) =>
    `${sqlTimeDigits(grownMs(now, grants, i))} || substr(lower(hex(randomblob(22))), 1, 43)`;
  const digest = digestAt('i');
  const owner = `'g-${tag}-' || i, 'client-' || (i % 1000), 'user-' || (i % 100000), '["openid","email"]', '["https://as.example"]'`;
  const grantExpiry = expiresIn < 0 ? now + expiresIn : now + 90 * 86400;
  const access = (kind) =>
    `${series} INSERT INTO portcullis_access_tokens (token_hash, jti, grant_id, client_id, user_id, scope, audience, issued_at, expires_at)
     SELECT ${digest}, 'jti-${tag}-${kind}-' || i, ${owner}, ${now - 1800}, ${now + Math.min(expiresIn, 3600)} FROM s`;
  return [
    `${series} INSERT INTO portcullis_grants (grant_id, client_id, user_id, scope, resources, auth_time, created_at, expires_at)
     SELECT ${owner}, ${now - 3600}, ${now - 3600}, ${grantExpiry} FROM s`,
    // The live successors first, then the rotated tokens that point at them (one per grant).
    `${series} INSERT INTO portcullis_refresh_tokens (token_hash, grant_id, client_id, user_id, scope, resources, issued_at, expires_at)
     SELECT ${digest}, ${owner}, ${now - 1800}, ${now + expiresIn} FROM s`,
    `INSERT INTO portcullis_refresh_tokens (token_hash, grant_id, client_id, user_id, scope, resources, issued_at, expires_at, rotated_at, successor_hash)
     SELECT ${digestAt(`CAST(substr(grant_id, ${`g-${tag}-`.length + 1}) AS integer)`)}, grant_id, client_id, user_id, scope, resources, ${now - 3600}, ${now + expiresIn}, ${now - 1800}, token_hash
     FROM portcullis_refresh_tokens WHERE grant_id LIKE 'g-${tag}-%' AND rotated_at IS NULL`,
    access('a1'),
    access('a2'),
  ];
}

/**
 * A backend: how to open a store (with a way to run SQL on it and to read the CPU its database
 * spends outside this process), and how to grow it.
 * @typedef {object} OpenedStore
 * @property {import('../dist/index.js').Storage} storage
 * @property {(text: string) => Promise<void>} exec
 * @property {() => Promise<number>} externalCpuSeconds - CPU of the database outside this process
 * @property {() => Promise<string>} size - the size of its tables, for the report
 * @property {(tokens: number, now: number, tag: string, expiresIn: number) => Promise<void>} grow
 * @property {() => Promise<void>} close
 */

const BACKENDS = {
  /** PostgreSQL: a database created for the run, one schema and one pool per store. */
  async postgres() {
    const { default: pg } = await import('pg');
    const { postgresStorage } = await import('../dist/postgres.js');
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    const name = `pc_growth_${randomBytes(6).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(DATABASE_URL);
    url.pathname = `/${name}`;
    const pools = [];
    return {
      description: `PostgreSQL ${(await admin.query('SHOW server_version')).rows[0].server_version}`,
      /** @returns {Promise<OpenedStore>} */
      async open(label) {
        const application = `growth_${label}`;
        const pool = new pg.Pool({
          connectionString: url.href,
          max: CONCURRENCY,
          application_name: application,
        });
        pools.push(pool);
        const storage = postgresStorage({ pool }, { schema: label, deleteBatchSize: DELETE_BATCH });
        await storage.keys.list(); // migrates
        const exec = async (text) => void (await pool.query(text));
        return {
          storage,
          exec,
          async externalCpuSeconds() {
            const { rows } = await admin.query(
              'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
              [name, application],
            );
            return rows.reduce((sum, row) => sum + processCpuSeconds(row.pid), 0);
          },
          async size() {
            const { rows } = await pool.query(
              `SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) AS size FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
              [label],
            );
            return rows[0]?.size ?? '?';
          },
          async grow(tokens, now, tag, expiresIn) {
            for (const text of growthSql(`"${label}"`, tokens, now, tag, expiresIn)) await exec(text);
            await exec(
              `VACUUM ANALYZE "${label}".grants, "${label}".refresh_tokens, "${label}".access_tokens`,
            );
          },
          close: () => storage.close(),
        };
      },
      async dispose() {
        for (const pool of pools) await pool.end();
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      },
    };
  },

  /**
   * SQLite: one file per store, in this process (its CPU is this process's), opened as the
   * reference server opens it (`openSqliteDatabase`, shared with the storage).
   */
  async sqlite() {
    const { openSqliteDatabase, sqliteStorage } = await import('../dist/sqlite.js');
    const dirs = [];
    const dbs = [];
    const probe = await openSqliteDatabase({ path: ':memory:', onWarning: () => {} });
    const description = `SQLite ${probe.sqliteVersion} through ${probe.driver} (embedded, in this process)`;
    probe.close();
    return {
      description,
      async open(label) {
        const dir = mkdtempSync(join(tmpdir(), `pc-growth-${label}-`));
        dirs.push(dir);
        const db = await openSqliteDatabase({ dataDir: dir, onWarning: () => {} });
        dbs.push(db);
        const storage = sqliteStorage({ database: db, deleteBatchSize: DELETE_BATCH });
        await storage.keys.list(); // migrates
        const exec = async (text) => db.exec(text);
        return {
          storage,
          exec,
          externalCpuSeconds: async () => 0,
          async size() {
            const pages = db.get('PRAGMA page_count')?.page_count ?? 0;
            const pageSize = db.get('PRAGMA page_size')?.page_size ?? 0;
            return `${Math.round((pages * pageSize) / 2 ** 20)} MB`;
          },
          async grow(tokens, now, tag, expiresIn) {
            db.transaction(() => {
              for (const text of sqliteGrowthSql(tokens, now, tag, expiresIn)) db.exec(text);
            });
            db.exec('ANALYZE');
            db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
          },
          close: () => storage.close(),
        };
      },
      async dispose() {
        for (const db of dbs) db.close();
        for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      },
    };
  },

  /** PGlite: one data directory per store, in this process (its CPU is this process's). */
  async pglite() {
    const { openEmbeddedDatabase, pgliteStorage } = await import('../dist/pglite.js');
    const dirs = [];
    const dbs = [];
    return {
      description: 'PGlite (embedded, in this process)',
      async open(label) {
        const dir = mkdtempSync(join(tmpdir(), `pc-growth-${label}-`));
        dirs.push(dir);
        const db = await openEmbeddedDatabase(dir);
        dbs.push(db);
        const storage = pgliteStorage({ pglite: db }, { schema: label, deleteBatchSize: DELETE_BATCH });
        await storage.keys.list();
        const exec = async (text) => void (await db.exec(text));
        return {
          storage,
          exec,
          externalCpuSeconds: async () => 0,
          async size() {
            const { rows } = await db.query(
              `SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) AS size FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
              [label],
            );
            return rows[0]?.size ?? '?';
          },
          async grow(tokens, now, tag, expiresIn) {
            for (const text of growthSql(`"${label}"`, tokens, now, tag, expiresIn)) await exec(text);
            await exec(
              `VACUUM ANALYZE "${label}".grants, "${label}".refresh_tokens, "${label}".access_tokens`,
            );
          },
          close: () => storage.close(),
        };
      },
      async dispose() {
        for (const db of dbs) await db.close();
        for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** A client's own refresh chain and access token in a store, created through the storage contract. */
async function seedChain(storage, now) {
  const clientId = `bench-client-${hash().slice(0, 8)}`;
  const userId = `bench-user-${hash().slice(0, 8)}`;
  const code = {
    codeHash: hash(),
    grantId: `bench-${hash().slice(0, 16)}`,
    clientId,
    userId,
    redirectUri: 'http://127.0.0.1:49152/cb',
    redirectUriSent: true,
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    codeChallengeMethod: 'S256',
    scope: ['openid', 'email'],
    resources: ['https://as.example'],
    authTime: now,
    createdAt: now,
    expiresAt: now + 60,
  };
  await storage.codes.create(code);
  const grant = {
    grantId: code.grantId,
    clientId,
    userId,
    scope: code.scope,
    resources: code.resources,
    authTime: now,
    createdAt: now,
    expiresAt: now + 90 * 86400,
  };
  const chain = { grant, refresh: tokenKeyNow(), access: tokenKeyNow() };
  const result = await storage.codes.redeem({
    codeHash: code.codeHash,
    grant,
    accessToken: accessTokenOf(grant, chain.access, now),
    refreshToken: refreshTokenOf(grant, chain.refresh, now),
    now,
  });
  if (result.outcome !== 'redeemed') throw new Error(`seeding failed: ${result.outcome}`);
  return chain;
}

function accessTokenOf(grant, tokenHash, now) {
  return {
    tokenHash,
    jti: `jti-${tokenHash.slice(0, 12)}`,
    grantId: grant.grantId,
    clientId: grant.clientId,
    userId: grant.userId,
    scope: grant.scope,
    audience: grant.resources,
    issuedAt: now,
    expiresAt: now + 3600,
  };
}

function refreshTokenOf(grant, tokenHash, now) {
  return {
    tokenHash,
    grantId: grant.grantId,
    clientId: grant.clientId,
    userId: grant.userId,
    scope: grant.scope,
    resources: grant.resources,
    authTime: grant.authTime,
    issuedAt: now,
    expiresAt: now + 30 * 86400,
  };
}

const WORKLOADS = {
  /** What a refresh asks of storage: read the token, then rotate it. */
  async refresh(storage, chain) {
    const now = nowSeconds();
    const token = await storage.grants.getRefreshToken(chain.refresh, now);
    if (token === null) throw new Error('a refresh chain broke');
    const successor = tokenKeyNow();
    const access = tokenKeyNow();
    const result = await storage.grants.rotateRefreshToken({
      tokenHash: chain.refresh,
      successor: refreshTokenOf(chain.grant, successor, now),
      accessToken: accessTokenOf(chain.grant, access, now),
      sealedSuccessor: randomBytes(60).toString('base64url'),
      now,
    });
    if (result.outcome !== 'rotated') throw new Error(`rotation: ${result.outcome}`);
    chain.refresh = successor;
    chain.access = access;
  },
  /** What a protected request asks of storage: one read of the access token. */
  async userinfo(storage, chain) {
    if ((await storage.grants.getAccessToken(chain.access, nowSeconds())) === null)
      throw new Error('an access token vanished');
  },
};

/** One window: every client runs `workload` for `seconds`; returns ops and CPU per op, µs. */
async function window(store, chains, workload, seconds, latencies) {
  const cpu0 = process.cpuUsage();
  const ext0 = await store.externalCpuSeconds();
  const until = performance.now() + seconds * 1000;
  let ops = 0;
  await Promise.all(
    chains.map(async (chain) => {
      while (performance.now() < until) {
        const started = performance.now();
        await WORKLOADS[workload](store.storage, chain);
        latencies?.push(performance.now() - started);
        ops++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  const ext = (await store.externalCpuSeconds()) - ext0;
  const own = (cpu.user + cpu.system) / 1e6;
  return { ops, ownUs: (own / ops) * 1e6, dbUs: (ext / ops) * 1e6, totalUs: ((own + ext) / ops) * 1e6 };
}

const fmt = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

async function main() {
  const make = BACKENDS[args.backend];
  if (make === undefined)
    throw new Error(`unknown backend ${args.backend}: ${Object.keys(BACKENDS).join(', ')}`);
  const backend = await make();
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `storage growth: ${backend.description}; ${cpus().length} × ${cpus()[0]?.model ?? '?'}; Node ${process.versions.node}; load ${load}`,
  );
  try {
    const fresh = await backend.open('fresh');
    const grown = await backend.open('grown');
    const now = nowSeconds();
    let started = performance.now();
    await grown.grow(TOKENS, now, 'live', 30 * 86400);
    console.log(
      `grew the store by ${TOKENS.toLocaleString('en-US')} tokens in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const chains = new Map();
    for (const store of [fresh, grown]) {
      const own = [];
      for (let i = 0; i < CONCURRENCY; i++) own.push(await seedChain(store.storage, nowSeconds()));
      chains.set(store, own);
    }
    console.log(`table sizes: fresh ${await fresh.size()}, grown ${await grown.size()}`);

    const results = {};
    for (const workload of Object.keys(WORKLOADS)) {
      // A warm-up window each, discarded; then fresh, grown, fresh, grown, ...
      await window(fresh, chains.get(fresh), workload, 1);
      await window(grown, chains.get(grown), workload, 1);
      const sides = { fresh: [], grown: [] };
      for (let w = 0; w < WINDOWS; w++) {
        sides.fresh.push(await window(fresh, chains.get(fresh), workload, SECONDS));
        sides.grown.push(await window(grown, chains.get(grown), workload, SECONDS));
      }
      const ratios = sides.fresh.map((f, i) => sides.grown[i].totalUs / f.totalUs);
      const summary = (side) => ({
        opsPerSecond: median(side.map((w) => w.ops / SECONDS)),
        ownUs: median(side.map((w) => w.ownUs)),
        dbUs: median(side.map((w) => w.dbUs)),
        totalUs: median(side.map((w) => w.totalUs)),
      });
      results[workload] = { fresh: summary(sides.fresh), grown: summary(sides.grown), ratio: median(ratios) };
    }

    console.log('');
    console.log(
      '| storage steps of | store | ops/s | CPU µs/op (this process + database) | grown ÷ fresh | ≤ 1.10 |',
    );
    console.log('|---|---|--:|--:|--:|---|');
    for (const [workload, r] of Object.entries(results)) {
      for (const side of ['fresh', 'grown']) {
        const s = r[side];
        const cpu = `${fmt(s.totalUs)} (${fmt(s.ownUs)} + ${fmt(s.dbUs)})`;
        const last =
          side === 'grown' ? `${r.ratio.toFixed(2)}x | **${r.ratio <= 1.1 ? 'PASS' : 'FAIL'}**` : ' | ';
        console.log(
          `| ${side === 'fresh' ? workload : ''} | ${side === 'fresh' ? 'fresh' : `+${TOKENS.toLocaleString('en-US')} tokens`} | ${fmt(s.opsPerSecond)} | ${cpu} | ${last} |`,
        );
      }
    }

    /** What `--json` writes: the backend, the sizes, each workload's figures, the purge's. */
    const report = {
      backend: args.backend,
      description: backend.description,
      tokens: TOKENS,
      results,
      purge: null,
    };
    if (EXPIRED > 0) {
      // The purge: expired rows added, then deleted in batches while refreshes keep running.
      await grown.grow(EXPIRED, now, 'dead', -3600);
      const before = [];
      await window(grown, chains.get(grown), 'refresh', SECONDS, before);
      const during = [];
      let purging = true;
      // How long the event loop was held at a time: an embedded storage runs each batch on it.
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      started = performance.now();
      const purge = grown.storage.deleteExpired(nowSeconds()).finally(() => {
        purging = false;
      });
      const chainsOfGrown = chains.get(grown);
      await Promise.all(
        chainsOfGrown.map(async (chain) => {
          while (purging) {
            const t = performance.now();
            await WORKLOADS.refresh(grown.storage, chain);
            during.push(performance.now() - t);
            // Requests arrive as I/O events; an embedded storage answers without one, so without
            // this turn of the event loop the clients would starve the purge's own turns (timers).
            await new Promise((resolve) => setImmediate(resolve));
          }
        }),
      );
      const removed = await purge;
      loop.disable();
      const seconds = (performance.now() - started) / 1000;
      /** @param {number[]} xs */
      const latency = (xs) => ({ p50: pct(xs, 50), p99: pct(xs, 99), max: Math.max(...xs) });
      report.purge = {
        removed,
        seconds,
        batch: DELETE_BATCH,
        before: latency(before),
        during: { ...latency(during), count: during.length },
        loopDelayP99: loop.percentile(99) / 1e6,
        loopDelayMax: loop.max / 1e6,
      };
      const { before: b, during: d } = report.purge;
      console.log('');
      console.log(
        `purge: ${removed.toLocaleString('en-US')} expired rows deleted in ${seconds.toFixed(1)} s ` +
          `(${fmt(removed / seconds)} rows/s, batches of ${DELETE_BATCH}) while ${CONCURRENCY} clients kept refreshing; ` +
          `refresh latency p50/p99/max ${b.p50.toFixed(1)}/${b.p99.toFixed(1)}/${b.max.toFixed(1)} ms before, ` +
          `${d.p50.toFixed(1)}/${d.p99.toFixed(1)}/${d.max.toFixed(1)} ms during (${d.count} refreshes); ` +
          `event-loop delay during the purge p99/max ${report.purge.loopDelayP99.toFixed(1)}/${report.purge.loopDelayMax.toFixed(1)} ms`,
      );
      console.log(`table size after the purge: grown ${await grown.size()}`);
    }
    if (args.json !== undefined) writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
    await fresh.close();
    await grown.close();
  } finally {
    await backend.dispose();
  }
  console.log(
    `load after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

await main();
