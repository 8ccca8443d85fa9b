/**
 * The reference server's configuration, read from the environment once at start-up. A bad value
 * stops the start with one line naming the variable (see `main.ts`).
 * @module
 */
import { createClientAddressResolver, type TrustProxy } from 'portcullis';
import type { HardenServerOptions } from 'portcullis/node';
import { z } from 'zod';

/** Where the library's records and the server's own data live. */
export type StorageChoice =
  | { readonly kind: 'memory' }
  | { readonly kind: 'postgres'; readonly connectionString: string }
  | {
      readonly kind: 'sqlite';
      readonly dataDir: string;
      /** A PGlite data directory to copy into a new SQLite database before the first start. */
      readonly importPgliteFrom?: string;
    }
  | { readonly kind: 'pglite'; readonly dataDir: string };

/** Login throttling (see `accounts/login-guard.ts`); the defaults suit a public deployment. */
export interface LoginLimits {
  /** Failed logins per client address (IPv6: per /64) per day, whatever the email. */
  readonly failuresPerAddressPerDay: number;
  /** Failed logins in a row for one email from one address; a success resets the count. */
  readonly consecutiveFailuresPerAccount: number;
  /**
   * Successful logins per client address per hour: each costs a hash and creates a session, so one
   * valid account must not be able to keep the hash gate busy or fill the session table. Sized for
   * a school whose students share one NAT address.
   */
  readonly successesPerAddressPerHour: number;
  /**
   * Keys each login counter remembers at most (addresses, (email, address) pairs, addresses with
   * successes): the ceiling of the guard's memory, whatever the number of addresses.
   */
  readonly trackedKeys: number;
  /** Password hashes computed at once (each holds a thread of libuv's pool for ~130 ms). */
  readonly concurrentHashes: number;
  /** Logins waiting for a hash; beyond this they are answered 503 at once. */
  readonly hashQueue: number;
}

/** The defaults of {@link LoginLimits}. */
export const DEFAULT_LOGIN_LIMITS: LoginLimits = Object.freeze({
  failuresPerAddressPerDay: 100,
  consecutiveFailuresPerAccount: 10,
  successesPerAddressPerHour: 300,
  trackedKeys: 100_000,
  concurrentHashes: 2,
  hashQueue: 64,
});

/**
 * Connection limits of the HTTP server (the library's `hardenServer`, see `app.ts`); the defaults
 * suit the deployment this README describes, a TLS proxy or load balancer in front.
 */
export type ConnectionLimits = Required<HardenServerOptions>;

/** The defaults of {@link ConnectionLimits}. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = Object.freeze({
  // A client has 10 s for its request line and headers (slowloris), 30 s for the whole request:
  // the largest bodies we accept (256 KiB on /mcp, 1 MiB on the API) take well under that.
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  // Above the 60 s idle timeout of common proxies and load balancers (nginx's upstream
  // `keepalive_timeout`, AWS ALB): the proxy, not this server, closes an idle reused connection,
  // so it never sends a request on a socket being closed (a 502).
  keepAliveTimeoutMs: 65_000,
  // Below the usual 1024-descriptor `ulimit -n` minus the database pool (10) and files.
  maxConnections: 1_000,
});

/** Everything the server needs to start. */
export interface AppConfig {
  /** TCP port; 0 picks a free one (tests). */
  readonly port: number;
  readonly host: string;
  /** The issuer; absent means `http://127.0.0.1:<actual port>`, known once listening. */
  readonly issuer: string | undefined;
  readonly storage: StorageChoice;
  /** Origins besides the issuer's that may call `/mcp` from a browser (DNS-rebinding protection). */
  readonly mcpAllowedOrigins: readonly string[];
  /**
   * Host names besides the issuer's that requests may name in `Host` (`ALLOWED_HOSTS`), such as the
   * address a health check uses; any other host is refused `421` before pages, API and library.
   */
  readonly allowedHosts: readonly string[];
  /** Per-IP and per-client limits on the OAuth endpoints (the library's defaults); off only for load tests. */
  readonly rateLimit: boolean;
  /**
   * Tokens begin with the time they were made (`TIME_IN_TOKENS`, the library's
   * `tokens.timeInTokens`); off only while instances of an earlier release still run beside this one.
   */
  readonly timeInTokens: boolean;
  /** Which reverse proxies may report the client address (`TRUST_PROXY`); 0 trusts none. */
  readonly trustProxy: TrustProxy;
  /** Create and show the demo accounts (ada, grace) and the demo school. */
  readonly demo: boolean;
  /** The key that signs session cookies; absent: generated once and kept in the database. */
  readonly sessionSecret: string | undefined;
  /**
   * The 32 bytes the private signing keys are stored wrapped under (`KEY_WRAPPING_SECRET`, AES-256-GCM,
   * see key-wrapping.ts); absent: stored as JWK text, protected only by the database's own access.
   */
  readonly keyWrappingSecret: Uint8Array<ArrayBuffer> | undefined;
  readonly loginLimits: LoginLimits;
  readonly connectionLimits: ConnectionLimits;
}

const origin = z
  .url({ protocol: /^https?$/ })
  .refine((v) => !v.endsWith('/'), 'must not end with /')
  // Every route is served at the root of the origin, so the issuer is an origin.
  .refine((v) => new URL(v).pathname === '/' && !v.includes('?'), 'must be an origin, without path or query');

/** The entries of a comma-separated variable, trimmed, empty ones left out. */
function listOf(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

const PORT_RANGE = 'must be a port number, 0 to 65535';

const env = z.object({
  // Digits only: a coercion would read '' as 0 (a random port), and '1e3' or '0x50' as numbers.
  PORT: z
    .string()
    .regex(/^\d{1,5}$/, PORT_RANGE)
    .transform(Number)
    .refine((port) => port <= 65_535, PORT_RANGE)
    .default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  ISSUER: origin.optional(),
  DATABASE_URL: z.string().optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  PGLITE_IMPORT_DIR: z.string().min(1).optional(),
  STORAGE: z.enum(['memory', 'sqlite', 'pglite', 'default']).default('default'),
  MCP_ALLOWED_ORIGINS: z.string().default(''),
  ALLOWED_HOSTS: z
    .string()
    .default('')
    .refine(
      (value) =>
        listOf(value).every((host) => /^(\*|\[[0-9a-f:.]+\]|[a-z0-9_-]+(\.[a-z0-9_-]+)*)$/.test(host)),
      'must be comma-separated lower-case host names without port (10.0.0.7, health.internal)',
    ),
  RATE_LIMIT: z.enum(['on', 'off']).default('on'),
  TIME_IN_TOKENS: z.enum(['on', 'off']).default('on'),
  TRUST_PROXY: z
    .string()
    .default('')
    .refine((value) => {
      try {
        createClientAddressResolver({ trustProxy: value });
        return true;
      } catch {
        return false;
      }
    }, 'must be a hop count (1) or comma-separated proxy addresses and CIDR ranges (10.0.0.0/8, loopback)'),
  DEMO: z.enum(['on', 'off', 'auto']).default('auto'),
  SESSION_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters (e.g. `openssl rand -base64 32`)')
    .optional(),
  // 32 bytes in base64 or base64url: 43 characters and at most one '='. Buffer's decoder skips what
  // it does not know, so the text is checked first: a typo must not become another key.
  KEY_WRAPPING_SECRET: z
    .string()
    .regex(/^[A-Za-z0-9+/_-]{43}=?$/, 'must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)')
    .transform((text) => new Uint8Array(Buffer.from(text, 'base64')))
    .optional(),
});

/** True for `127.0.0.0/8`, `::1` and `localhost`, the hosts only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/**
 * Whether the demo accounts (with their published passwords) are created and shown. `DEMO=on`
 * asks for them, `DEMO=off` refuses them; by default they are on only when nothing but this
 * machine can reach the server: a plain `http://` loopback issuer and a loopback listening address.
 *
 * @throws Error when `DEMO=on` with an `https://` issuer: a public deployment must not accept
 *   `ada@example.com` / `ada-lovelace`
 */
function demoMode(setting: 'on' | 'off' | 'auto', issuer: string | undefined, host: string): boolean {
  const https = issuer?.startsWith('https:') ?? false;
  if (setting === 'on' && https) {
    throw new Error(
      `DEMO=on: the demo accounts have published passwords and an https issuer (${issuer}) is a public deployment; unset DEMO or set DEMO=off`,
    );
  }
  if (setting !== 'auto') return setting === 'on';
  const issuerLocal = issuer === undefined || (!https && isLoopbackHost(new URL(issuer).hostname));
  return issuerLocal && isLoopbackHost(host);
}

/**
 * Reads the configuration.
 *
 * - `PORT` (3000), `HOST` (127.0.0.1), `ISSUER` (`http://127.0.0.1:$PORT`)
 * - `STORAGE=memory`: nothing persists (tests, benchmarks)
 * - `DATABASE_URL=postgres://...`: PostgreSQL; otherwise SQLite, one file under `DATA_DIR` (./.data)
 * - `STORAGE=sqlite` or `STORAGE=pglite`: that embedded store under `DATA_DIR`, whatever `DATABASE_URL` says
 * - `PGLITE_IMPORT_DIR`: with SQLite, a PGlite data directory whose data a new database starts with
 * - `MCP_ALLOWED_ORIGINS`: comma-separated extra origins allowed to call `/mcp`
 * - `RATE_LIMIT=off`: no limits on the OAuth endpoints (load tests from one address); default `on`
 * - `TIME_IN_TOKENS=off`: tokens as earlier releases made them, for a rolling upgrade; default `on`
 * - `TRUST_PROXY`: proxies allowed to report the client address (hop count or addresses); default none
 * - `DEMO=on|off`: the demo accounts; default on only for an http loopback issuer on a loopback socket
 * - `SESSION_SECRET`: the cookie-signing key (32+ characters); default generated and kept in the database
 * - `KEY_WRAPPING_SECRET`: 32 bytes (base64) the signing keys are stored wrapped under; default none
 *
 * @throws Error with one line per invalid variable, each naming it
 */
export function configFromEnv(source: Readonly<Record<string, string | undefined>>): AppConfig {
  const parsed = env.safeParse(source);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid environment: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  let storage: StorageChoice;
  if (e.STORAGE === 'memory') storage = { kind: 'memory' };
  else if (e.STORAGE === 'sqlite' || e.STORAGE === 'pglite')
    storage = { kind: e.STORAGE, dataDir: e.DATA_DIR };
  else if (e.DATABASE_URL !== undefined && e.DATABASE_URL !== '') {
    if (!/^postgres(ql)?:\/\//.test(e.DATABASE_URL)) {
      throw new Error('invalid environment: DATABASE_URL: must be a postgres:// URL');
    }
    storage = { kind: 'postgres', connectionString: e.DATABASE_URL };
  } else storage = { kind: 'sqlite', dataDir: e.DATA_DIR };
  if (e.PGLITE_IMPORT_DIR !== undefined) {
    if (storage.kind !== 'sqlite') {
      throw new Error('invalid environment: PGLITE_IMPORT_DIR: only with the SQLite storage (the default)');
    }
    storage = { ...storage, importPgliteFrom: e.PGLITE_IMPORT_DIR };
  }
  return {
    port: e.PORT,
    host: e.HOST,
    issuer: e.ISSUER,
    storage,
    mcpAllowedOrigins: listOf(e.MCP_ALLOWED_ORIGINS),
    allowedHosts: listOf(e.ALLOWED_HOSTS),
    rateLimit: e.RATE_LIMIT === 'on',
    timeInTokens: e.TIME_IN_TOKENS === 'on',
    trustProxy: e.TRUST_PROXY,
    demo: demoMode(e.DEMO, e.ISSUER, e.HOST),
    sessionSecret: e.SESSION_SECRET,
    keyWrappingSecret: e.KEY_WRAPPING_SECRET,
    loginLimits: DEFAULT_LOGIN_LIMITS,
    connectionLimits: DEFAULT_CONNECTION_LIMITS,
  };
}
