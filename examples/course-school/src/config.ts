/**
 * The reference server's configuration, read from the environment once at start-up. Bad values
 * stop the start with a message naming the variable.
 * @module
 */
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

/** Everything the server needs to start. */
export interface AppConfig {
  /** TCP port; 0 picks a free one (tests). */
  readonly port: number;
  readonly host: string;
  /** The issuer; absent means `http://<host>:<actual port>`, known once listening. */
  readonly issuer: string | undefined;
  readonly storage: StorageChoice;
  /** Origins besides the issuer's that may call `/mcp` from a browser (DNS-rebinding protection). */
  readonly mcpAllowedOrigins: readonly string[];
  /** Per-IP and per-client limits on the OAuth endpoints (the library's defaults); off only for load tests. */
  readonly rateLimit: boolean;
}

const env = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  ISSUER: z
    .url({ protocol: /^https?$/ })
    .refine((v) => !v.endsWith('/'), 'must not end with /')
    // Every route is served at the root of the origin, so the issuer is an origin.
    .refine(
      (v) => new URL(v).pathname === '/' && !v.includes('?'),
      'must be an origin, without path or query',
    )
    .optional(),
  DATABASE_URL: z.string().optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  PGLITE_IMPORT_DIR: z.string().min(1).optional(),
  STORAGE: z.enum(['memory', 'sqlite', 'pglite', 'default']).default('default'),
  MCP_ALLOWED_ORIGINS: z.string().default(''),
  RATE_LIMIT: z.enum(['on', 'off']).default('on'),
});

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
 *
 * @throws Error naming each invalid variable
 */
export function configFromEnv(source: Readonly<Record<string, string | undefined>>): AppConfig {
  const parsed = env.safeParse(source);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid environment:\n  ${problems.join('\n  ')}`);
  }
  const e = parsed.data;
  let storage: StorageChoice;
  if (e.STORAGE === 'memory') storage = { kind: 'memory' };
  else if (e.STORAGE === 'sqlite' || e.STORAGE === 'pglite')
    storage = { kind: e.STORAGE, dataDir: e.DATA_DIR };
  else if (e.DATABASE_URL !== undefined && e.DATABASE_URL !== '') {
    if (!/^postgres(ql)?:\/\//.test(e.DATABASE_URL)) {
      throw new Error('invalid environment:\n  DATABASE_URL: must be a postgres:// URL');
    }
    storage = { kind: 'postgres', connectionString: e.DATABASE_URL };
  } else storage = { kind: 'sqlite', dataDir: e.DATA_DIR };
  if (e.PGLITE_IMPORT_DIR !== undefined) {
    if (storage.kind !== 'sqlite') {
      throw new Error(
        'invalid environment:\n  PGLITE_IMPORT_DIR: only with the SQLite storage (the default)',
      );
    }
    storage = { ...storage, importPgliteFrom: e.PGLITE_IMPORT_DIR };
  }
  return {
    port: e.PORT,
    host: e.HOST,
    issuer: e.ISSUER,
    storage,
    mcpAllowedOrigins: e.MCP_ALLOWED_ORIGINS.split(',')
      .map((o) => o.trim())
      .filter((o) => o !== ''),
    rateLimit: e.RATE_LIMIT === 'on',
  };
}
