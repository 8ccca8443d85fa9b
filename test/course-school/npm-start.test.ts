/**
 * `npm start` smoke test: the start script is the one the README describes (build the library,
 * build the server, run the compiled server); its run step, started on a free port, prints the
 * base-URL line, serves the authorization server metadata, and stops cleanly on SIGINT (Ctrl-C).
 * The build steps are not repeated here: the compiled output must be fresh (see
 * test/helpers/server-process.ts), which `npm test` ensures.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
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

const RUN = `node --enable-source-maps --max-semi-space-size=4 --heap-growing-percent=50 ${MAIN}`;

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

  it("runs on the embedded default, SQLite in DATA_DIR, when neither STORAGE nor DATABASE_URL is set: the directory it creates is the owner's only (0700), the file 0600", async () => {
    assertCompiledServerFresh();
    const root = mkdtempSync(join(tmpdir(), 'course-school-default-'));
    const dataDir = join(root, '.data');
    const file = join(dataDir, 'portcullis.sqlite');
    try {
      const port = await freePort();
      const server = await startServerProcess(
        { PORT: String(port), DATA_DIR: dataDir },
        RUN.split(' ').slice(1),
      );
      expect(server.stdout()).toContain(`storage: SQLite ${file})`);
      const response = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`);
      expect(response.status).toBe(200);
      // It holds the private signing keys: no other account on the host may open it.
      expect([statSync(dataDir).mode & 0o777, statSync(file).mode & 0o777]).toEqual([0o700, 0o600]);
      const exit = await server.stop('SIGINT');
      expect(exit).toMatchObject({ code: 0, signal: null, stderr: '' });

      // A file other accounts can read (an earlier release made them 0644): a warning, as a log line.
      chmodSync(file, 0o644);
      const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const again = await startServerProcess(
        { PORT: String(port), DATA_DIR: dataDir },
        RUN.split(' ').slice(1),
      );
      const stopped = await again.stop('SIGINT');
      expect(stopped.code).toBe(0);
      expect(
        stopped.stderr
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line)),
      ).toEqual([
        {
          time: expect.any(String),
          level: 'warn',
          message: expect.stringMatching(
            new RegExp(
              `^portcullis: the SQLite database ${escaped} \\(mode 0644\\) can be opened by other accounts on this host; .*: chmod 600 ${escaped}$`,
            ),
          ),
        },
      ]);
      expect(statSync(file).mode & 0o777).toBe(0o644);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
