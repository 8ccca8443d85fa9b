/**
 * PKJ-05 with real clients: Python's authlib (Debian python3-authlib) and requests-oauthlib
 * (python3-requests-oauthlib), each with its default client authentication (`client_secret_basic`),
 * register with the reference server and exchange a code at its token endpoint. The browser's part
 * (the school's login form and the library's consent page) is done over HTTP by the test
 * (school-flow.ts), so no browser is needed; each script (python/*_defaults.py) prints the
 * authorization URL and reads the callback URL. Without them this fails under CI=true and is
 * skipped elsewhere.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { checkPythonClients, PYTHON } from '../../scripts/client-matrix.mjs';
import { startTestServer } from '../helpers/course-school.js';
import { ADA, browse, siteOf } from '../helpers/school-flow.js';

const AUTHLIB = fileURLToPath(new URL('./python/authlib_defaults.py', import.meta.url));
const REQUESTS_OAUTHLIB = fileURLToPath(new URL('./python/requests_oauthlib_defaults.py', import.meta.url));
const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

function pythonProblem(): string | undefined {
  try {
    checkPythonClients();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

let school: CourseSchoolServer;
beforeAll(async () => {
  school = await startTestServer();
});
afterAll(() => school.close());

/** Runs a client script, answering its authorization URL with the browser's callback URL. */
function runClient(script: string): Promise<{
  code: number | null;
  steps: Record<string, Record<string, unknown>>;
  stderr: string;
}> {
  const site = siteOf(school);
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [script, school.issuer, REDIRECT_URI], {
      // Both refuse http endpoints unless told; this issuer is a loopback one.
      env: { ...process.env, AUTHLIB_INSECURE_TRANSPORT: '1', OAUTHLIB_INSECURE_TRANSPORT: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const steps: Record<string, Record<string, unknown>> = {};
    let stderr = '';
    let pending = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        steps[String(entry.step)] = entry;
        if (entry.step === 'authorize') {
          browse(site, String(entry.url), ADA).then(
            ({ callback }) => child.stdin.end(`${callback.href}\n`),
            (error: unknown) => {
              child.kill('SIGKILL');
              reject(error);
            },
          );
        }
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, steps, stderr });
    });
  });
}

function requirePython(ctx: { skip(note?: string): void }): void {
  const problem = pythonProblem();
  if (problem === undefined) return;
  if (process.env.CI === 'true') throw new Error(`${problem} (required when CI=true)`);
  ctx.skip(problem);
}

describe('PKJ-05 Python clients with their default settings against the reference server', () => {
  it('authlib registers with client_secret_basic and exchanges a code with HTTP Basic (RFC 6749 §2.3.1)', async (ctx) => {
    requirePython(ctx);
    const { code, steps, stderr } = await runClient(AUTHLIB);
    expect(code, stderr).toBe(0);
    expect(steps.registration).toMatchObject({ auth: 'client_secret_basic' });
    expect(steps.token).toMatchObject({ auth: 'client_secret_basic', scope: 'courses:read', refresh: true });
  });

  it('requests-oauthlib exchanges a code with HTTP Basic, its default when given the secret', async (ctx) => {
    requirePython(ctx);
    const { code, steps, stderr } = await runClient(REQUESTS_OAUTHLIB);
    expect(code, stderr).toBe(0);
    expect(steps.registration).toMatchObject({ auth: 'client_secret_basic' });
    expect(steps.token).toMatchObject({ auth: 'client_secret_basic', scope: 'courses:read', refresh: true });
  });
});
