/**
 * The order of a start: the server listens first, the library's endpoints answer once the library
 * has started (without waiting for the demo accounts' scrypt hashes or the app's routes), and every
 * other path waits for the whole start. A request that arrives at any moment of a first start gets
 * the answer it would get after it: never a refusal, an empty login page or a 5xx.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { DEMO_ACCOUNTS } from '../../examples/course-school/src/seed.js';
import { login, startTestServer } from '../helpers/course-school.js';
import { freePort } from '../helpers/server-process.js';

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** Asks `url` every few milliseconds until `done`, keeping every answer (refused connections are not answers). */
async function askUntil(url: string, done: () => boolean): Promise<Answer[]> {
  const answers: Answer[] = [];
  while (!done() || answers.length === 0) {
    try {
      const response = await fetch(url);
      answers.push({ status: response.status, body: await response.text() });
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return answers;
}

describe('course-school start order', () => {
  it('answers the metadata, the login page and the API correctly at every moment of a first start on SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cs-start-order-'));
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    let started = false;
    let server: CourseSchoolServer | undefined;
    try {
      const starting = startTestServer({ STORAGE: 'sqlite', DATA_DIR: dir, PORT: String(port) }).then((s) => {
        started = true;
        server = s;
        return s;
      });
      const [metadata, loginPage, api] = await Promise.all([
        askUntil(`${issuer}/.well-known/oauth-authorization-server`, () => started),
        askUntil(`${issuer}/login`, () => started),
        askUntil(`${issuer}/api/v1/account`, () => started),
        starting,
      ]);
      for (const answer of metadata) {
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body)).toMatchObject({ issuer });
      }
      // The login page waited for the demo accounts: each answer lists them.
      for (const answer of loginPage) {
        expect(answer.status).toBe(200);
        for (const account of DEMO_ACCOUNTS) expect(answer.body).toContain(account.email);
      }
      for (const answer of api) expect(answer.status).toBe(401);
      const ada = DEMO_ACCOUNTS[0]!;
      const { cookie } = await login(issuer, ada.email, ada.password);
      expect(cookie).toBeDefined();
    } finally {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
