/**
 * `npm start` smoke test: the start script is the one the README describes (build the library,
 * build the server, run the compiled server); its run step, started on a free port, prints the
 * base-URL line, serves the authorization server metadata, and stops cleanly on SIGINT (Ctrl-C).
 * The build steps are not repeated here: the compiled output must be fresh (see
 * test/helpers/server-process.ts), which `npm test` ensures.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  assertCompiledServerFresh,
  freePort,
  MAIN,
  ROOT,
  startServerProcess,
  stopAllServerProcesses,
} from '../helpers/server-process.js';

afterAll(stopAllServerProcesses);

const RUN = `node --enable-source-maps --max-semi-space-size=8 --heap-growing-percent=50 ${MAIN}`;

describe('npm start', () => {
  it('is: build the library, build the server, run the compiled server, as the README says', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.start).toBe(`npm run build && npm run build:example && ${RUN}`);
    expect(pkg.scripts['build:example']).toBe('tsup --config examples/course-school/tsup.config.ts');
    const readme = readFileSync(join(ROOT, 'examples/course-school/README.md'), 'utf8').replace(/\s+/g, ' ');
    expect(readme).toContain(
      '`npm start` builds the library (`npm run build`) and this server (`npm run build:example`',
    );
    expect(readme).toContain(`then runs \`${RUN}\``);
  });

  it('prints its base URL, serves the metadata, and exits 0 on SIGINT', async () => {
    assertCompiledServerFresh();
    const port = await freePort();
    const server = await startServerProcess(
      { PORT: String(port), STORAGE: 'memory' },
      RUN.split(' ').slice(1),
    );
    const base = `http://127.0.0.1:${port}`;
    expect(server.stdout()).toBe(
      `course-school listening on ${base} (socket 127.0.0.1:${port}, storage: memory (nothing persists))\n`,
    );

    const response = await fetch(`${base}/.well-known/oauth-authorization-server`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/api/oauth/token`,
      registration_endpoint: `${base}/api/oauth/register`,
    });

    const exit = await server.stop('SIGINT');
    expect(exit).toMatchObject({ code: 0, signal: null, stderr: '' });
    expect(exit.stdout.split('\n').filter((l) => l !== '')).toHaveLength(1);
    // Nothing listens any more.
    await expect(fetch(`${base}/`)).rejects.toThrow();
  });

  it('runs on the embedded default, SQLite in DATA_DIR, when neither STORAGE nor DATABASE_URL is set', async () => {
    assertCompiledServerFresh();
    const dataDir = mkdtempSync(join(tmpdir(), 'course-school-default-'));
    try {
      const port = await freePort();
      const server = await startServerProcess(
        { PORT: String(port), DATA_DIR: dataDir },
        RUN.split(' ').slice(1),
      );
      expect(server.stdout()).toContain(`storage: SQLite ${join(dataDir, 'portcullis.sqlite')})`);
      const response = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`);
      expect(response.status).toBe(200);
      expect(existsSync(join(dataDir, 'portcullis.sqlite'))).toBe(true);
      const exit = await server.stop('SIGINT');
      expect(exit).toMatchObject({ code: 0, signal: null, stderr: '' });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
