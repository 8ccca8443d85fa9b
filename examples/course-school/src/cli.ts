/**
 * The reference server's command-line tool, for operators: it works on the database the server
 * uses (the same `DATABASE_URL`, `DATA_DIR`, `STORAGE` variables).
 *
 * ```sh
 * printf '%s\n' "$PASSWORD" | node examples/course-school/dist/cli.js add-user \
 *   --email owner@school.example --name "Ada Lovelace" --role owner
 * ```
 *
 * ```sh
 * node examples/course-school/dist/cli.js backup /var/backups/school-$(date +%F).sqlite
 * ```
 *
 * `add-user` creates an account; the password is read from standard input (the first line), so it
 * appears neither in the process list nor in the shell history. This is the only way to create a
 * school owner: an owner may grant every scope, so only someone with access to the database (the
 * operator) decides who runs the school. On the default SQLite it may run beside the server (several
 * processes share the file); with `STORAGE=pglite`, stop the server first: one process at a time
 * opens its directory.
 *
 * `backup` writes a consistent copy of the default SQLite database to a new file while servers run
 * on it (SQLite's `VACUUM INTO`: one read transaction, so the copy is the database as of one commit,
 * whatever the servers write meanwhile). A copy of the file itself is not one: the last commits may
 * be in the `-wal` file beside it, and a file copied while written can be torn. The new file is
 * created for this account only (`0600`) before anything is written to it: it holds the signing
 * keys and the session secret. PostgreSQL and PGlite have their own tools (the message says which).
 *
 * `rotate-keys` adds a new signing key per algorithm and retires the current ones (the library's
 * `rotateSigningKeys`): the new keys are published at once and sign once every cache of the JWKS
 * can have seen them (its cache lifetime plus the interval at which servers re-read their keys);
 * `--immediate`, for a key that may have leaked, makes them sign as soon as each server re-reads
 * its keys (within a minute). Tokens signed by a retired key stay valid until they expire. It runs
 * beside servers on SQLite and PostgreSQL; with `STORAGE=pglite`, stop the server first.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createAuthorizationServer } from 'portcullis';
import { z } from 'zod';
import { hashPassword } from './accounts/passwords.js';
import { displayName } from './api/schemas.js';
import { configFromEnv } from './config.js';
import { signingKeyOptions } from './key-wrapping.js';
import { openStorage, sqliteFileIn } from './storage.js';

const USAGE = `usage: node examples/course-school/dist/cli.js add-user --email <email> --name <name> [--role student|owner]
  The password is read from standard input (first line), e.g.
    printf '%s\\n' "$PASSWORD" | node examples/course-school/dist/cli.js add-user --email ada@school.example --name "Ada" --role owner
       node examples/course-school/dist/cli.js backup <new file>
  A consistent copy of the SQLite database (the default storage), made while the server runs.
       node examples/course-school/dist/cli.js rotate-keys [--immediate]
  New signing keys: published now, signing in about 6 minutes (--immediate: at once, for a leaked key).
  Storage: the server's variables (DATABASE_URL, DATA_DIR, STORAGE).`;

const account = z.object({
  email: z
    .email()
    .max(254)
    .transform((e) => e.toLowerCase()),
  name: displayName(100),
  role: z.enum(['student', 'owner']),
  password: z.string().min(10, 'the password must have at least 10 characters').max(200),
});

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) throw new Error('pipe the password on standard input (see the usage)');
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text.split(/\r?\n/, 1)[0] ?? '';
}

async function addUser(args: readonly string[]): Promise<string> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string', default: 'student' },
    },
    strict: true,
  });
  const parsed = account.safeParse({ ...values, password: await readPassword() });
  if (!parsed.success) {
    throw new Error(
      parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; '),
    );
  }
  const input = parsed.data;
  const storage = await openStorage(configFromEnv(process.env).storage);
  try {
    if ((await storage.data.getUserByEmail(input.email)) !== null) {
      throw new Error(`an account with the email ${input.email} exists already`);
    }
    const id = `usr_${randomBytes(12).toString('base64url')}`;
    await storage.data.createUser({
      id,
      email: input.email,
      name: input.name,
      role: input.role,
      passwordHash: await hashPassword(input.password),
      createdAt: Date.now(),
    });
    return `created ${input.role} ${input.email} (${id}) in ${storage.description}`;
  } finally {
    await storage.close();
  }
}

/** What to use instead of `backup` where the data is not in the SQLite file. */
const BACKUP_ELSEWHERE = {
  postgres: "the data is in PostgreSQL (DATABASE_URL): back it up with pg_dump or your provider's backups",
  pglite:
    'the data is in PGlite (STORAGE=pglite): stop the server, then copy DATA_DIR; one process at a time opens it',
  memory: 'STORAGE=memory keeps nothing to back up',
} as const;

/**
 * The SQLite file of the default storage, refusing a `DATA_DIR` that has none: opening it would
 * create an empty database, which would then look like the school's (`what`: why that matters here).
 */
function sqliteFileOf(choice: { readonly dataDir: string }, what: string): string {
  const file = sqliteFileIn(choice.dataDir);
  if (!existsSync(file)) throw new Error(`there is no database at ${file} (DATA_DIR): ${what}`);
  return file;
}

async function backup(args: readonly string[]): Promise<string> {
  const { positionals } = parseArgs({ args: [...args], options: {}, allowPositionals: true, strict: true });
  if (positionals.length !== 1 || positionals[0] === '')
    throw new Error('backup takes one argument: the new file');
  const target = resolve(positionals[0]!);
  const choice = configFromEnv(process.env).storage;
  if (choice.kind !== 'sqlite') throw new Error(`no backup here: ${BACKUP_ELSEWHERE[choice.kind]}`);
  const file = sqliteFileOf(choice, 'nothing to back up');
  try {
    closeSync(openSync(target, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new Error(`${target} exists already: backup writes a new file, never over another`);
    throw error;
  }
  const { openSqliteDatabase } = await import('portcullis/sqlite');
  try {
    const db = await openSqliteDatabase({ dataDir: choice.dataDir });
    try {
      db.run('VACUUM INTO ?', target);
    } finally {
      db.close();
    }
  } catch (error) {
    rmSync(target, { force: true });
    throw error;
  }
  return `backed up ${file} to ${target} (${statSync(target).size} bytes, mode 0600)`;
}

async function rotateKeys(args: readonly string[]): Promise<string> {
  const { values } = parseArgs({
    args: [...args],
    options: { immediate: { type: 'boolean', default: false } },
    strict: true,
  });
  const config = configFromEnv(process.env);
  if (config.storage.kind === 'memory') throw new Error('STORAGE=memory keeps no keys to rotate');
  if (config.storage.kind === 'sqlite') sqliteFileOf(config.storage, 'no keys to rotate');
  const storage = await openStorage(config.storage);
  try {
    const before = new Set((await storage.oauth.keys.list()).map((key) => key.kid));
    // The server's key options (key-wrapping.ts): the same plan, and new keys wrapped as its are.
    // It answers no request, so registration is off (and so is the warning about its limits).
    const keys = await signingKeyOptions(config.keyWrappingSecret);
    const oauth = await createAuthorizationServer({
      issuer: config.issuer ?? 'http://127.0.0.1:3000',
      storage: storage.oauth,
      registration: { enabled: false },
      ...(keys === undefined ? {} : { keys }),
    });
    try {
      await oauth.rotateSigningKeys({ immediate: values.immediate });
    } finally {
      await oauth.close();
    }
    const added = (await storage.oauth.keys.list()).filter((key) => !before.has(key.kid));
    const from = new Date(Math.min(...added.map((key) => key.activatesAt)) * 1000).toISOString();
    return `new signing keys ${added.map((key) => `${key.kid} (${key.alg})`).join(', ')} in ${storage.description}: published now, signing from ${from}${values.immediate ? ', as each server re-reads its keys (within a minute)' : ''}`;
  } finally {
    await storage.close();
  }
}

const COMMANDS: Readonly<Record<string, (args: readonly string[]) => Promise<string>>> = {
  'add-user': addUser,
  backup,
  'rotate-keys': rotateKeys,
};

const [command, ...rest] = process.argv.slice(2);
const run = command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
try {
  if (run === undefined) throw new Error(command === undefined ? 'no command' : `unknown command ${command}`);
  console.log(await run(rest));
} catch (error) {
  console.error(`course-school: ${error instanceof Error ? error.message : String(error)}`);
  const code = (error as { code?: string }).code;
  if (
    run === undefined ||
    code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
    code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
  ) {
    console.error(USAGE);
  }
  process.exitCode = 1;
}
