/**
 * The reference server's command-line tool, for operators: it works on the database the server
 * uses (the same `DATABASE_URL`, `DATA_DIR`, `STORAGE` variables).
 *
 * ```sh
 * printf '%s\n' "$PASSWORD" | node examples/course-school/dist/cli.js add-user \
 *   --email owner@school.example --name "Ada Lovelace" --role owner
 * ```
 *
 * `add-user` creates an account; the password is read from standard input (the first line), so it
 * appears neither in the process list nor in the shell history. This is the only way to create a
 * school owner: an owner may grant every scope, so only someone with access to the database (the
 * operator) decides who runs the school. With the embedded database (PGlite), stop the server first:
 * one process at a time opens its directory.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { hashPassword } from './accounts/passwords.js';
import { displayName } from './api/schemas.js';
import { configFromEnv } from './config.js';
import { openStorage } from './storage.js';

const USAGE = `usage: node examples/course-school/dist/cli.js add-user --email <email> --name <name> [--role student|owner]
  The password is read from standard input (first line), e.g.
    printf '%s\\n' "$PASSWORD" | node examples/course-school/dist/cli.js add-user --email ada@school.example --name "Ada" --role owner
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

const [command, ...rest] = process.argv.slice(2);
try {
  if (command !== 'add-user')
    throw new Error(command === undefined ? 'no command' : `unknown command ${command}`);
  console.log(await addUser(rest));
} catch (error) {
  console.error(`course-school: ${error instanceof Error ? error.message : String(error)}`);
  if (command !== 'add-user' || (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    console.error(USAGE);
  }
  process.exitCode = 1;
}
