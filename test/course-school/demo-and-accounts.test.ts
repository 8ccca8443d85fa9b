/**
 * Demo data only where it is safe, and real accounts: the demo accounts (published passwords) exist
 * and are shown only when asked for (`DEMO=on`) or when nothing but this machine can reach the
 * server (an http loopback issuer on a loopback socket); an https issuer with `DEMO=on` refuses to
 * start, saying why in one line; the operator creates accounts, owners included, with the
 * `add-user` command, and they sign in on a server without demo data.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { configFromEnv } from '../../examples/course-school/src/config.js';
import { login, startTestServer } from '../helpers/course-school.js';
import {
  addUserWithCli,
  assertCompiledServerFresh,
  MAIN,
  ROOT,
  startServerProcess,
  stopAllServerProcesses,
  unexpectedStderr,
} from '../helpers/server-process.js';

describe('when demo data is on (DEMO)', () => {
  const demo = (env: Record<string, string>) => configFromEnv(env).demo;

  it('is on by default for npm start on a laptop: the default issuer, an http loopback one', () => {
    expect(demo({})).toBe(true);
    expect(demo({ ISSUER: 'http://127.0.0.1:3000' })).toBe(true);
    expect(demo({ ISSUER: 'http://localhost:3000' })).toBe(true);
    expect(demo({ ISSUER: 'http://[::1]:3000', HOST: '::1' })).toBe(true);
  });

  it('is off by default for an https issuer, a non-loopback issuer, or a socket others can reach', () => {
    expect(demo({ ISSUER: 'https://school.example' })).toBe(false);
    expect(demo({ ISSUER: 'http://school.example' })).toBe(false);
    expect(demo({ HOST: '0.0.0.0' })).toBe(false);
  });

  it('follows DEMO=on and DEMO=off, and refuses anything else naming the variable', () => {
    expect(demo({ DEMO: 'off' })).toBe(false);
    expect(demo({ DEMO: 'on', ISSUER: 'http://school.example' })).toBe(true);
    expect(() => demo({ DEMO: 'yes' })).toThrow(/DEMO/);
  });

  it('refuses DEMO=on with an https issuer, saying why', () => {
    expect(() => demo({ DEMO: 'on', ISSUER: 'https://school.example' })).toThrow(
      /DEMO=on: the demo accounts have published passwords and an https issuer \(https:\/\/school\.example\)/,
    );
  });
});

describe('other settings of a deployment', () => {
  it('reads TRUST_PROXY as a hop count or proxy addresses, and refuses anything else naming it', () => {
    expect(configFromEnv({}).trustProxy).toBe('');
    expect(configFromEnv({ TRUST_PROXY: '1' }).trustProxy).toBe('1');
    expect(configFromEnv({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toBe('loopback, 10.0.0.0/8');
    expect(() => configFromEnv({ TRUST_PROXY: 'proxy.example' })).toThrow(/TRUST_PROXY/);
    expect(() => configFromEnv({ TRUST_PROXY: '10.0.0.0/40' })).toThrow(/TRUST_PROXY/);
  });

  it('refuses a SESSION_SECRET shorter than 32 characters', () => {
    expect(() => configFromEnv({ SESSION_SECRET: 'short' })).toThrow(/SESSION_SECRET/);
    expect(configFromEnv({ SESSION_SECRET: 'x'.repeat(32) }).sessionSecret).toBe('x'.repeat(32));
  });
});

describe('the compiled server with an https issuer and DEMO=on', () => {
  it('refuses to start: exit code 1 and one line saying why', async () => {
    assertCompiledServerFresh();
    const child = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        ISSUER: 'https://school.example',
        DEMO: 'on',
        STORAGE: 'memory',
        PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code).toBe(1);
    expect(stdout).toBe('');
    const lines = stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^course-school: DEMO=on: .*https issuer.*; unset DEMO or set DEMO=off$/);
  });
});

describe('the pages in each mode', () => {
  let app: CourseSchoolServer | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('lists the demo accounts on the login page and the home page in demo mode, and they sign in', async () => {
    app = await startTestServer();
    expect(app.demo).toBe(true);
    for (const path of ['/login', '/']) {
      const html = await (await fetch(`${app.issuer}${path}`)).text();
      expect(html, path).toContain('<code>ada@example.com</code> / <code>ada-lovelace</code>');
    }
    expect((await login(app.issuer, 'ada@example.com', 'ada-lovelace')).response.status).toBe(303);
  });

  it('with DEMO=off shows no demo account anywhere, and ada does not exist', async () => {
    app = await startTestServer({ DEMO: 'off' });
    expect(app.demo).toBe(false);
    for (const path of ['/login', '/', '/auth.md', '/llms.txt']) {
      const body = await (await fetch(`${app.issuer}${path}`)).text();
      expect(body, path).not.toContain('ada-lovelace');
      expect(body, path).not.toContain('grace-hopper');
    }
    expect((await login(app.issuer, 'ada@example.com', 'ada-lovelace')).response.status).toBe(401);
    // No demo school either: the catalog is empty until the owner fills it.
    const courses = (await (await fetch(`${app.issuer}/api/v1/courses`)).json()) as { data: unknown[] };
    expect(courses.data).toEqual([]);
  });
});

// Each run opens the embedded database (SQLite) in a child process: a second or so on a busy machine.
describe('accounts made by the operator with add-user', { timeout: 90_000 }, () => {
  let dataDir: string;
  const OWNER = {
    email: 'Owner@School.example',
    name: 'Ada Owner',
    role: 'owner',
    password: 'correct horse battery',
  } as const;

  beforeAll(() => {
    assertCompiledServerFresh();
    dataDir = mkdtempSync(join(tmpdir(), 'course-school-cli-'));
  });
  afterAll(async () => {
    await stopAllServerProcesses();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates an owner once, refuses a second account with the same email and bad input', async () => {
    const env = { DATA_DIR: dataDir };
    const created = await addUserWithCli(env, OWNER);
    expect(unexpectedStderr(created.stderr)).toEqual([]);
    expect(created.code).toBe(0);
    // The embedded default: SQLite, one file in DATA_DIR.
    expect(created.stdout).toMatch(/^created owner owner@school\.example \(usr_[\w-]+\) in SQLite /);
    expect(created.stdout.trim().endsWith(` in SQLite ${join(dataDir, 'portcullis.sqlite')}`)).toBe(true);

    const again = await addUserWithCli(env, { ...OWNER, email: 'owner@school.example' });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('an account with the email owner@school.example exists already');

    const bad = await addUserWithCli(env, { ...OWNER, email: 'not an email', password: 'short' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('email');
    expect(bad.stderr).toContain('at least 10 characters');
  });

  it('the account signs in on a server without demo data, as the school owner', async () => {
    const server = await startServerProcess({ DATA_DIR: dataDir, PORT: '0', DEMO: 'off' });
    const signedIn = await login(server.base, 'owner@school.example', OWNER.password);
    expect(signedIn.response.status).toBe(303);
    const account = await fetch(`${server.base}/account`, { headers: { cookie: signedIn.cookie! } });
    expect(await account.text()).toContain('school owner');
    expect((await login(server.base, 'ada@example.com', 'ada-lovelace')).response.status).toBe(401);
    expect((await server.stop()).code).toBe(0);
  });
});
