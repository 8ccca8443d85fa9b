/**
 * The `portcullis-migrate` command: creates or upgrades the storage schema in a PostgreSQL
 * database, as a deploy step before new instances start (then run them with `autoMigrate: false`).
 * The logic lives here, apart from the executable, so that tests run it in-process.
 * @module
 */
import { parseArgs } from 'node:util';
import { migrate } from '../storage/postgres.js';
import { DEFAULT_SCHEMA } from '../storage/sql/schema-name.js';

/** Where the command reads its environment and writes its output. */
export interface MigrateCliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  out(line: string): void;
  err(line: string): void;
}

const USAGE = `Usage: portcullis-migrate [--database-url <url>] [--schema <name>]

Creates or upgrades the portcullis storage schema in a PostgreSQL database.
Safe to run repeatedly, and from several processes at once.

  --database-url <url>  postgres://user:password@host:5432/database (default: $DATABASE_URL)
  --schema <name>       schema holding the tables (default: ${DEFAULT_SCHEMA})
  -h, --help            show this help`;

/**
 * Runs the command.
 *
 * @param args - the arguments after the command name
 * @param io - environment and output streams
 * @returns the exit code: 0 migrated (or already up to date), 1 migration failed, 2 usage error
 * @example
 * ```ts
 * import { runMigrateCli } from './migrate-cli.js';
 *
 * const code = await runMigrateCli(['--schema', 'auth'], {
 *   env: process.env,
 *   out: (line) => console.log(line),
 *   err: (line) => console.error(line),
 * });
 * ```
 */
export async function runMigrateCli(args: readonly string[], io: MigrateCliIo): Promise<number> {
  let values: {
    'database-url'?: string | undefined;
    schema?: string | undefined;
    help?: boolean | undefined;
  };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        'database-url': { type: 'string' },
        schema: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    io.err(`portcullis-migrate: ${error instanceof Error ? error.message : String(error)}`);
    io.err(USAGE);
    return 2;
  }
  if (values.help === true) {
    io.out(USAGE);
    return 0;
  }
  const connectionString = values['database-url'] ?? io.env.DATABASE_URL;
  if (connectionString === undefined || connectionString === '') {
    io.err('portcullis-migrate: no database: pass --database-url or set DATABASE_URL');
    io.err(USAGE);
    return 2;
  }
  const schema = values.schema ?? DEFAULT_SCHEMA;
  try {
    const report = await migrate({ connectionString }, { schema });
    // Never echo the URL: it may carry a password.
    io.out(
      report.applied.length === 0
        ? `portcullis-migrate: schema "${report.schema}" is up to date (version ${report.toVersion})`
        : `portcullis-migrate: schema "${report.schema}" migrated from version ${report.fromVersion} to ${report.toVersion} (applied ${report.applied.join(', ')})`,
    );
    return 0;
  } catch (error) {
    const usage = error instanceof TypeError;
    io.err(
      `portcullis-migrate: ${usage ? '' : 'migration failed: '}${error instanceof Error ? error.message : String(error)}`,
    );
    return usage ? 2 : 1;
  }
}
