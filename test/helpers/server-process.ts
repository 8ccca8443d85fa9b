/**
 * The compiled reference server (`examples/course-school/dist/main.js`, what `npm start` runs) as
 * a child process: started with an environment of the test's choosing, ready once it prints its
 * base-URL line, stopped by signal. Every process started here is killed when the test file ends,
 * even on failure ({@link stopAllServerProcesses}).
 *
 * The tests run the compiled library (`dist/`) and server. When either is older than its sources
 * they FAIL, naming the command to run, rather than test stale code.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Site } from './school-flow.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The compiled entry point, relative to the repository root. */
export const MAIN = 'examples/course-school/dist/main.js';

/** Variables the server reads: never inherited from the test's environment (CI sets DATABASE_URL). */
const SERVER_VARIABLES = [
  'PORT',
  'HOST',
  'ISSUER',
  'DATABASE_URL',
  'DATA_DIR',
  'STORAGE',
  'MCP_ALLOWED_ORIGINS',
  'ALLOWED_HOSTS',
  'SESSION_SECRET',
  'KEY_WRAPPING_SECRET',
  'TRUST_PROXY',
  'DEMO',
  'RATE_LIMIT',
  'TIME_IN_TOKENS',
  'NODE_OPTIONS',
];

function newestMtime(dir: string): { file: string; mtime: number } {
  let newest = { file: dir, mtime: 0 };
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    const mtime = statSync(file).mtimeMs;
    if (mtime > newest.mtime) newest = { file, mtime };
  }
  return newest;
}

function mtimeOf(file: string): number | undefined {
  try {
    return statSync(join(ROOT, file)).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * Throws unless the built library and the compiled server exist and are newer than their sources.
 * @throws Error naming the stale file and the build command
 */
export function assertCompiledServerFresh(): void {
  const builds: [output: string, sources: string, command: string][] = [
    ['dist/index.js', 'src', 'npm run build'],
    ['dist/pglite.js', 'src', 'npm run build'],
    ['dist/postgres.js', 'src', 'npm run build'],
    [MAIN, 'examples/course-school/src', 'npm run build:example'],
  ];
  for (const [output, sources, command] of builds) {
    const built = mtimeOf(output);
    const newest = newestMtime(join(ROOT, sources));
    if (built === undefined) throw new Error(`${output} is missing: run \`${command}\` first`);
    if (newest.mtime > built) {
      throw new Error(
        `${output} is older than ${newest.file.slice(ROOT.length)}: run \`npm run build && npm run build:example\` first`,
      );
    }
  }
}

/** A free TCP port on 127.0.0.1 (free when asked; the server takes it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** How a server process ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A running reference server process. */
export interface ServerProcess extends Site {
  readonly pid: number;
  /** What it printed so far. */
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

const running = new Set<ChildProcessByStdio<null, Readable, Readable>>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts `node [args] main.js` (by default the compiled server with source maps, as `npm start`)
 * and resolves once it prints `course-school listening on <issuer> (socket <host:port>, ...)`.
 */
export async function startServerProcess(
  env: Readonly<Record<string, string>>,
  args: readonly string[] = ['--enable-source-maps', MAIN],
): Promise<ServerProcess> {
  const inherited = { ...process.env };
  for (const name of SERVER_VARIABLES) delete inherited[name];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      // Let the pipes drain before reporting what was printed.
      setImmediate(() => resolve({ code, signal, stdout, stderr }));
    });
  });
  const ready = await new Promise<{ issuer: string; socket: string }>((resolve, reject) => {
    const onData = () => {
      const m = /course-school listening on (\S+) \(socket (\S+), storage: .*\)\n/.exec(stdout);
      if (m === null) return;
      child.stdout.off('data', onData);
      resolve({ issuer: m[1]!, socket: m[2]! });
    };
    child.stdout.on('data', onData);
    void exited.then((exit) =>
      reject(
        new Error(
          `the server exited (${exit.code ?? exit.signal}) before it was ready:\n${exit.stdout}${exit.stderr}`,
        ),
      ),
    );
  });
  return {
    issuer: ready.issuer,
    base: `http://${ready.socket}`,
    pid: child.pid!,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Kills (SIGKILL) every server process still running: for `afterAll`, so nothing outlives a failed test. */
export async function stopAllServerProcesses(): Promise<void> {
  const exits = [...running]
    .filter((child) => child.exitCode === null && child.signalCode === null)
    .map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    );
  await Promise.all(exits);
}

/** The compiled command-line tool, relative to the repository root. */
export const CLI = 'examples/course-school/dist/cli.js';

/**
 * The lines of `stderr` other than the warning Node.js 22 (and 24 before 24.15) prints when
 * `node:sqlite` first loads: what a quiet run of the tool or the server must leave empty.
 */
export function unexpectedStderr(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line !== '' && !/ExperimentalWarning: SQLite|--trace-warnings/.test(line));
}

/** What a command of the tool printed and how it ended. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `node cli.js <args>` against the storage `env` names (the server's variables), as an
 * operator would, with `stdin` on its standard input.
 */
export function runCli(
  env: Readonly<Record<string, string>>,
  args: readonly string[],
  stdin = '',
): Promise<CliRun> {
  const inherited = { ...process.env };
  for (const name of SERVER_VARIABLES) delete inherited[name];
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.end(stdin);
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/**
 * Runs `node cli.js add-user --email --name --role` with the password on standard input, against
 * the storage `env` names (the server's variables), as an operator would.
 */
export function addUserWithCli(
  env: Readonly<Record<string, string>>,
  user: {
    readonly email: string;
    readonly name: string;
    readonly role: 'owner' | 'student';
    readonly password: string;
  },
): Promise<CliRun> {
  return runCli(
    env,
    ['add-user', '--email', user.email, '--name', user.name, '--role', user.role],
    `${user.password}\n`,
  );
}
