/**
 * The curl walkthrough of docs/getting-started.md ("A first flow with curl"), run as written
 * against examples/express-login on a free port: the guide's commands are the test. It needs
 * `bash`, `curl`, `jq` and `openssl`; without one of them the test is skipped with a message,
 * or fails when `CI=true`.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../examples/express-login/server.js';

const run = promisify(execFile);
const GUIDE = new URL('../../docs/getting-started.md', import.meta.url);
const DOCUMENTED_ORIGIN = 'http://127.0.0.1:3000';

/** The first `sh` block under the heading `## A first flow with curl`. */
function walkthrough(): string {
  const markdown = readFileSync(GUIDE, 'utf8');
  const section = markdown.slice(markdown.indexOf('## A first flow with curl'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (block === null) throw new Error('docs/getting-started.md has no curl walkthrough');
  return block[1]!;
}

function missingTools(): string[] {
  return ['bash', 'curl', 'jq', 'openssl'].filter((tool) => {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
}

const missing = missingTools();
if (missing.length > 0) {
  const message = `the getting-started walkthrough needs ${missing.join(', ')}`;
  if (process.env.CI === 'true') throw new Error(`${message}; CI requires it`);
  console.warn(`SKIPPED ${message}: install them to run it.`);
}

describe.skipIf(missing.length > 0)('docs/getting-started.md, a first flow with curl', () => {
  let origin = '';
  let close = async () => {};
  let dir = '';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portcullis-walkthrough-'));
    // Listen first: the issuer must be the origin curl talks to.
    const { default: express } = await import('express');
    const outer = express();
    const server = outer.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { app, oauth } = await createApp(origin);
    outer.use(app);
    close = async () => {
      await oauth.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
  });
  afterAll(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers, signs in, consents, exchanges the code, calls the API, refreshes and revokes', async () => {
    const script = walkthrough();
    expect(script).toContain(`AS=${DOCUMENTED_ORIGIN}`);
    const { stdout } = await run(
      'bash',
      ['-euo', 'pipefail', '-c', script.replaceAll(DOCUMENTED_ORIGIN, origin)],
      {
        cwd: dir,
        timeout: 30_000,
      },
    );
    const lines = stdout.trim().split('\n');
    // Each step prints what the guide says it prints.
    expect(lines.find((l) => l.startsWith('http://127.0.0.1:49152/callback?code='))).toMatch(
      new RegExp(`&state=af0ifjsldkj&iss=${encodeURIComponent(origin).replace(/[.]/g, '\\.')}$`),
    );
    expect(stdout).toContain('"scope": "openid profile notes:read"');
    expect(lines).toContain('{"name":"Ada Lovelace","sub":"ada"}');
    expect(lines).toContain('{"owner":"ada","notes":["Buy milk"]}');
    expect(lines.slice(-2)).toEqual(['200', '401']);
  });
});
