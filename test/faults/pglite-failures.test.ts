/**
 * The embedded storage failing under a running server: its PGlite instance closed underneath (a
 * host that shut its database down first, or a WebAssembly runtime that aborted). The failure is
 * not transient, so requests answer `500 server_error` at once and are logged as errors, and the
 * process goes on: nothing PGlite throws escapes as an uncaught exception or an unhandled rejection
 * (vitest fails the file if one does).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LogFields, Logger } from '../../src/core/context.js';
import { openEmbeddedDatabase, pgliteStorage } from '../../src/storage/pglite.js';
import { USERINFO } from '../helpers/endpoints.js';
import { Harness, json } from '../helpers/harness.js';

const dataDir = await mkdtemp(join(tmpdir(), 'portcullis-pglite-fault-'));

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('the embedded storage failing under a running server', () => {
  it('a PGlite closed underneath: 500 server_error at once, logged at error, and the process lives on', async () => {
    const db = await openEmbeddedDatabase(dataDir);
    const errors: { message: string; fields?: LogFields }[] = [];
    const logger: Logger = {
      debug() {},
      info() {},
      warn() {},
      error: (message, fields) => errors.push({ message, ...(fields === undefined ? {} : { fields }) }),
    };
    const h = await Harness.start({ storage: pgliteStorage({ pglite: db }), options: { logger } });
    try {
      const { client, body } = await h.tokens({ grant_types: ['authorization_code', 'refresh_token'] });
      await db.close();
      const refreshed = await h.refresh(client, String(body.refresh_token));
      expect(refreshed.status).toBe(500);
      expect(json(refreshed).error).toBe('server_error');
      const read = await h.send({
        method: 'GET',
        url: USERINFO,
        headers: { authorization: `Bearer ${String(body.access_token)}` },
      });
      expect(read.status).toBe(500);
      expect(errors.map((e) => e.message)).toEqual(['request failed', 'request failed']);
      expect(String(errors[0]?.fields?.error)).toContain('PGlite is closed');
    } finally {
      await h.close().catch(() => {});
    }
  }, 60_000);
});
