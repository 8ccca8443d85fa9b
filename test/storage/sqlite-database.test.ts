import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  openSqliteDatabaseWith,
  type SqliteDatabase,
  WAL_AUTOCHECKPOINT_PAGES,
} from '../../src/storage/sqlite/database.js';
import type { SqliteDriver, SqliteDriverName } from '../../src/storage/sqlite/driver.js';
import {
  isSqliteConstraint,
  SqliteUnavailableError,
  sqliteResultCode,
} from '../../src/storage/sqlite/errors.js';
import { StorageUnavailableError } from '../../src/storage/unavailable.js';
import { availableDrivers, scratchDir, TESTED_DRIVERS } from './sqlite-drivers.js';

const drivers = await availableDrivers();

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const SCHEMA = `CREATE TABLE IF NOT EXISTS codes (
  id TEXT PRIMARY KEY,
  grant_id TEXT,
  consumed_at INTEGER
) STRICT`;

describe.each(TESTED_DRIVERS)('%s', (name: SqliteDriverName) => {
  const driver = drivers.get(name);
  let scratch: ReturnType<typeof scratchDir>;
  const open: SqliteDatabase[] = [];
  const openDb = (options: Parameters<typeof openSqliteDatabaseWith>[2] = {}) => {
    if (driver === undefined) throw new Error('unreachable');
    const db = openSqliteDatabaseWith(driver, scratch.file(), options);
    open.push(db);
    return db;
  };

  beforeEach(() => {
    scratch = scratchDir();
  });
  afterEach(() => {
    for (const db of open.splice(0)) db.close();
    scratch.remove();
  });

  it.skipIf(driver === undefined)(
    'opens the file in WAL mode with the durability and checkpoint pragmas',
    () => {
      const db = openDb();
      expect(db.get<{ journal_mode: string }>('PRAGMA journal_mode')?.journal_mode).toBe('wal');
      expect(db.get<{ synchronous: number }>('PRAGMA synchronous')?.synchronous).toBe(1); // NORMAL
      expect(db.get<{ timeout: number }>('PRAGMA busy_timeout')?.timeout).toBe(5000);
      expect(db.get<{ foreign_keys: number }>('PRAGMA foreign_keys')?.foreign_keys).toBe(1);
      expect(db.get<{ trusted_schema: number }>('PRAGMA trusted_schema')?.trusted_schema).toBe(0);
      expect(db.get<{ wal_autocheckpoint: number }>('PRAGMA wal_autocheckpoint')?.wal_autocheckpoint).toBe(
        WAL_AUTOCHECKPOINT_PAGES,
      );
      const full = openDb({ synchronous: 'full', busyTimeoutMs: 250 });
      expect(full.get<{ synchronous: number }>('PRAGMA synchronous')?.synchronous).toBe(2); // FULL
      expect(full.get<{ timeout: number }>('PRAGMA busy_timeout')?.timeout).toBe(250);
    },
  );

  it.skipIf(driver === undefined)(
    'prepares each statement once and reuses it, within a bounded cache',
    () => {
      const db = openDb({ statementCacheSize: 2 });
      const first = db.statement('SELECT 1 AS one');
      expect(db.statement('SELECT 1 AS one')).toBe(first);
      db.statement('SELECT 2 AS two');
      db.statement('SELECT 3 AS three'); // evicts the oldest
      expect(db.statement('SELECT 1 AS one')).not.toBe(first);
      expect(db.get<{ one: number }>('SELECT 1 AS one')?.one).toBe(1);
    },
  );

  it.skipIf(driver === undefined)('commits every statement of a transaction together', () => {
    const db = openDb();
    db.exec(SCHEMA);
    db.run('INSERT INTO codes (id) VALUES (?)', 'c1');
    const redeemed = db.transaction(() => {
      const { changes } = db.run(
        'UPDATE codes SET consumed_at = ?, grant_id = ? WHERE id = ? AND consumed_at IS NULL',
        1,
        'g1',
        'c1',
      );
      db.run('INSERT INTO codes (id, grant_id) VALUES (?, ?)', 'c2', 'g1');
      return Number(changes) === 1;
    });
    expect(redeemed).toBe(true);
    const rows = db.all<{ id: string }>('SELECT id FROM codes WHERE grant_id = ? ORDER BY id', 'g1');
    expect(rows.map((row) => row.id)).toEqual(['c1', 'c2']);
  });

  it.skipIf(driver === undefined)('rolls back every statement when the transaction throws', () => {
    const db = openDb();
    db.exec(SCHEMA);
    db.run('INSERT INTO codes (id) VALUES (?)', 'c1');
    const failure = new Error('signing failed');
    expect(() =>
      db.transaction(() => {
        db.run('UPDATE codes SET consumed_at = 1 WHERE id = ?', 'c1');
        db.run('INSERT INTO codes (id) VALUES (?)', 'c2');
        throw failure;
      }),
    ).toThrow(failure);
    expect(db.inTransaction).toBe(false);
    expect(
      db.get<{ consumed_at: number | null }>('SELECT consumed_at FROM codes WHERE id = ?', 'c1')?.consumed_at,
    ).toBeNull();
    expect(db.get('SELECT id FROM codes WHERE id = ?', 'c2')).toBeUndefined();
  });

  it.skipIf(driver === undefined)(
    'rolls back a failed constraint and reports it as a constraint error',
    () => {
      const db = openDb();
      db.exec(SCHEMA);
      db.run('INSERT INTO codes (id) VALUES (?)', 'c1');
      let caught: unknown;
      try {
        db.transaction(() => {
          db.run('INSERT INTO codes (id) VALUES (?)', 'c2');
          db.run('INSERT INTO codes (id) VALUES (?)', 'c1');
        });
      } catch (error) {
        caught = error;
      }
      expect(isSqliteConstraint(caught)).toBe(true);
      expect(db.get('SELECT id FROM codes WHERE id = ?', 'c2')).toBeUndefined();
    },
  );

  it.skipIf(driver === undefined)('refuses an asynchronous callback and writes nothing', () => {
    const db = openDb();
    db.exec(SCHEMA);
    expect(() =>
      db.transaction(() => {
        db.run('INSERT INTO codes (id) VALUES (?)', 'c1');
        return Promise.resolve(1);
      }),
    ).toThrow(TypeError);
    expect(db.get('SELECT id FROM codes')).toBeUndefined();
  });

  it.skipIf(driver === undefined)('refuses a nested transaction and rolls back the outer one', () => {
    const db = openDb();
    db.exec(SCHEMA);
    expect(() =>
      db.transaction(() => {
        db.run('INSERT INTO codes (id) VALUES (?)', 'c1');
        db.transaction(() => 1);
      }),
    ).toThrow(TypeError);
    expect(db.get('SELECT id FROM codes')).toBeUndefined();
  });

  it.skipIf(driver === undefined)(
    'waits for the write lock of another connection, then reports it busy and writes nothing',
    () => {
      const holder = openDb();
      holder.exec(SCHEMA);
      const waiter = openDb({ busyTimeoutMs: 50 });
      holder.exec('BEGIN IMMEDIATE');
      const started = performance.now();
      let caught: unknown;
      try {
        waiter.transaction(() => waiter.run('INSERT INTO codes (id) VALUES (?)', 'w'));
      } catch (error) {
        caught = error;
      }
      const waited = performance.now() - started;
      expect(caught).toBeInstanceOf(StorageUnavailableError);
      expect(caught).toMatchObject({ reason: 'timeout', mayHaveApplied: false });
      expect(waited).toBeGreaterThanOrEqual(40); // the busy timeout, not an immediate failure
      expect(waiter.inTransaction).toBe(false);
      holder.exec('COMMIT');
      // the lock released, the same call goes through
      waiter.transaction(() => waiter.run('INSERT INTO codes (id) VALUES (?)', 'w'));
      expect(holder.get<{ id: string }>('SELECT id FROM codes')?.id).toBe('w');
    },
  );

  it.skipIf(driver === undefined)('sees the commits of another connection on the same file', () => {
    const a = openDb();
    const b = openDb();
    a.exec(SCHEMA);
    a.transaction(() => a.run('INSERT INTO codes (id) VALUES (?)', 'c1'));
    expect(b.get<{ id: string }>('SELECT id FROM codes')?.id).toBe('c1');
  });

  it.skipIf(driver === undefined)('closes idempotently, rolling back an open transaction', () => {
    const db = openDb();
    db.exec(SCHEMA);
    db.exec('BEGIN IMMEDIATE');
    db.run('INSERT INTO codes (id) VALUES (?)', 'c1');
    db.close();
    db.close();
    const again = openDb();
    expect(again.get('SELECT id FROM codes')).toBeUndefined();
    expect(() => db.get('SELECT 1')).toThrow();
  });

  it.skipIf(driver === undefined)('warns once when its SQLite predates the WAL-reset fix', () => {
    const warnings: string[] = [];
    openDb({ onWarning: (message) => warnings.push(message) });
    const old = (driver?.sqliteVersion ?? '').localeCompare('3.51.3', undefined, { numeric: true }) < 0;
    expect(warnings).toHaveLength(old ? 1 : 0);
    if (old) expect(warnings[0]).toContain('walresetbug');
  });

  describe('a file it cannot use: refused, named, with what to do, and left as it was', () => {
    const openAt = (file: string) => {
      if (driver === undefined) throw new Error('unreachable');
      return openSqliteDatabaseWith(driver, file);
    };
    const refusal = (file: string): SqliteUnavailableError => {
      let caught: unknown;
      try {
        open.push(openAt(file));
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(SqliteUnavailableError);
      return caught as SqliteUnavailableError;
    };

    it.skipIf(driver === undefined)('a file that is not a SQLite database (SQLITE_NOTADB)', () => {
      const file = scratch.file('random.bin');
      const bytes = randomBytes(8192);
      writeFileSync(file, bytes);
      const error = refusal(file);
      expect(error.message).toBe(
        `SQLite cannot use ${file} (file is not a database): it is not a SQLite database (another kind of file, or an encrypted one): give the storage another path, or move this file aside`,
      );
      expect(sqliteResultCode(error.cause)).toBe(26);
      expect(readFileSync(file).equals(bytes)).toBe(true);
    });

    it.skipIf(driver === undefined)('a directory where the file should be (SQLITE_CANTOPEN)', () => {
      const file = scratch.file('a-directory');
      mkdirSync(file);
      const error = refusal(file);
      expect(error.message).toMatch(
        new RegExp(
          `^SQLite cannot use ${escapeRegExp(file)} \\(.*unable to open database file\\): it must be a file`,
        ),
      );
      expect(sqliteResultCode(error.cause)).toBe(14);
    });

    it.skipIf(driver === undefined)(
      'a damaged page that a query finds later (SQLITE_CORRUPT): the same refusal from the statement',
      () => {
        const file = scratch.file('damaged.sqlite');
        const db = openAt(file);
        db.exec(SCHEMA);
        db.transaction(() => {
          for (let i = 0; i < 2000; i++)
            db.run('INSERT INTO codes (id) VALUES (?)', `code-${i}-${'x'.repeat(40)}`);
        });
        db.exec('PRAGMA wal_checkpoint(TRUNCATE)'); // every page in the file, none in the log
        db.close();
        const pageSize = 4096;
        const damaged = readFileSync(file);
        damaged.fill(0xff, 2 * pageSize, damaged.length - pageSize); // the table's pages, not page 1 (the header and schema)
        writeFileSync(file, damaged);
        const reopened = openAt(file); // the header and the schema are intact
        open.push(reopened);
        let caught: unknown;
        try {
          reopened.all('SELECT id FROM codes');
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(SqliteUnavailableError);
        expect((caught as Error).message).toMatch(
          new RegExp(
            `^SQLite cannot use ${escapeRegExp(file)} \\(.*malformed.*\\): the file is damaged: restore it from a backup`,
          ),
        );
        expect(sqliteResultCode((caught as Error).cause)).toBe(11);
      },
    );

    it.skipIf(driver === undefined)('a file in a directory that does not exist (SQLITE_CANTOPEN)', () => {
      const file = join(scratch.dir, 'missing', 'db.sqlite');
      const error = refusal(file);
      expect(error.message).toMatch(
        new RegExp(
          `^SQLite cannot use ${escapeRegExp(file)} \\(.*unable to open database file\\): it must be a file`,
        ),
      );
      expect(sqliteResultCode(error.cause)).toBe(14);
      expect(existsSync(join(scratch.dir, 'missing'))).toBe(false);
    });
  });

  describe('other accounts on the host: the file holds the private signing keys', () => {
    const modeOf = (path: string) => statSync(path).mode & 0o777;
    const openWatching = (file: string) => {
      if (driver === undefined) throw new Error('unreachable');
      const warnings: string[] = [];
      const db = openSqliteDatabaseWith(driver, file, {
        // Only these: an old SQLite (Node 24.0's node:sqlite) also warns, about something else.
        onWarning: (message) => {
          if (message.includes('other accounts')) warnings.push(message);
        },
      });
      open.push(db);
      return { db, warnings };
    };

    it.skipIf(driver === undefined)(
      "a new file, its log and its shared memory are the owner's only (0600), with no warning",
      () => {
        const file = scratch.file();
        const { db, warnings } = openWatching(file);
        db.exec(SCHEMA);
        db.run('INSERT INTO codes (id) VALUES (?)', 'c1'); // the -wal and -shm files exist once written
        expect([file, `${file}-wal`, `${file}-shm`].map(modeOf)).toEqual([0o600, 0o600, 0o600]);
        expect(warnings).toEqual([]);
      },
    );

    it.skipIf(driver === undefined)(
      'an existing file group or others can open: one warning naming each and the chmod; modes left as they were',
      () => {
        const file = scratch.file();
        openWatching(file).db.exec(SCHEMA); // creates the tables; -wal and -shm stay while it is open
        for (const [path, mode] of [
          [file, 0o644],
          [`${file}-wal`, 0o640],
        ] as const)
          chmodSync(path, mode);
        const { warnings } = openWatching(file);
        expect(warnings).toEqual([
          `portcullis: the SQLite database ${file} (mode 0644), ${file}-wal (mode 0640) can be opened by other ` +
            'accounts on this host; it holds the private signing keys (unless keys.wrapping is set) and a hash ' +
            `of every token. Unless that is intended: chmod 600 ${file} ${file}-wal`,
        ]);
        expect([modeOf(file), modeOf(`${file}-wal`)]).toEqual([0o644, 0o640]);

        chmodSync(file, 0o600);
        chmodSync(`${file}-wal`, 0o600);
        expect(openWatching(file).warnings).toEqual([]);
      },
    );

    it.skipIf(driver === undefined)(
      'a directory other accounts can write, sticky or not (they could replace the file or plant its -wal): one warning naming it',
      () => {
        const file = scratch.file();
        const warning = (mode: string) =>
          `portcullis: the directory of the SQLite database ${file}, ${scratch.dir} (mode ${mode}), can be ` +
          'written by other accounts on this host: they could replace the database, or put a log file beside ' +
          `it that SQLite would read. Unless that is intended: chmod go-w ${scratch.dir}, or give the ` +
          'database a directory of its own';
        chmodSync(scratch.dir, 0o775);
        expect(openWatching(file).warnings).toEqual([warning('0775')]);
        chmodSync(scratch.dir, 0o1777);
        expect(openWatching(file).warnings).toEqual([warning('1777')]);
        chmodSync(scratch.dir, 0o755); // others may read the names, not change them: the file is 0600
        expect(openWatching(file).warnings).toEqual([]);
        expect(modeOf(scratch.dir)).toBe(0o755);
      },
    );
  });

  describe('two processes switching a new file to WAL at the same moment (FLT-04)', () => {
    const SWITCH = 'PRAGMA journal_mode = WAL';
    /**
     * The error SQLite gives the second of two connections that want the file's exclusive lock:
     * a real one, from this driver (a connection holding the lock, and one that does not wait).
     */
    const busyError = (): unknown => {
      if (driver === undefined) throw new Error('unreachable');
      const holder = driver.open(scratch.file('held.sqlite'));
      const other = driver.open(scratch.file('held.sqlite'));
      try {
        holder.exec('BEGIN EXCLUSIVE');
        other.exec('PRAGMA busy_timeout = 0');
        other.prepare(SWITCH).get();
      } catch (error) {
        return error;
      } finally {
        holder.exec('ROLLBACK');
        other.close();
        holder.close();
      }
      throw new Error('the second connection got the lock');
    };
    /** This driver, with the switch to WAL failing as `failure` the first `times` tries. */
    const failingSwitch = (failure: unknown, times: number) => {
      if (driver === undefined) throw new Error('unreachable');
      const real = driver;
      const counts = { tries: 0 };
      const wrapped: SqliteDriver = {
        name: real.name,
        sqliteVersion: real.sqliteVersion,
        open(file) {
          const connection = real.open(file);
          return {
            exec: (sql) => connection.exec(sql),
            close: () => connection.close(),
            prepare(sql) {
              if (sql !== SWITCH) return connection.prepare(sql);
              counts.tries++;
              if (counts.tries > times) return connection.prepare(sql);
              return {
                get: () => {
                  throw failure;
                },
                run: () => {
                  throw failure;
                },
                all: () => {
                  throw failure;
                },
              };
            },
          };
        },
      };
      return { wrapped, counts };
    };

    it.skipIf(driver === undefined)(
      'the connection answered SQLITE_BUSY at once tries again and opens the file in WAL mode',
      () => {
        const busy = busyError();
        expect(sqliteResultCode(busy)).toBe(5);
        const { wrapped, counts } = failingSwitch(busy, 2);
        const db = openSqliteDatabaseWith(wrapped, scratch.file());
        open.push(db);
        expect(counts.tries).toBe(3);
        expect(db.get<{ journal_mode: string }>('PRAGMA journal_mode')?.journal_mode).toBe('wal');
      },
    );

    it.skipIf(driver === undefined)(
      'gives up at the busy timeout with the storage unavailable, and does not retry other errors',
      () => {
        const { wrapped, counts } = failingSwitch(busyError(), Number.POSITIVE_INFINITY);
        expect(() => openSqliteDatabaseWith(wrapped, scratch.file(), { busyTimeoutMs: 30 })).toThrow(
          StorageUnavailableError,
        );
        expect(counts.tries).toBeGreaterThan(1);

        const broken = failingSwitch(new Error('disk I/O error'), 1);
        expect(() => openSqliteDatabaseWith(broken.wrapped, scratch.file('other.sqlite'))).toThrow(
          'disk I/O error',
        );
        expect(broken.counts.tries).toBe(1);
      },
    );
  });

  it.skipIf(driver === undefined)('rejects options out of bounds', () => {
    expect(() => openDb({ busyTimeoutMs: -1 })).toThrow(RangeError);
    expect(() => openDb({ busyTimeoutMs: 60_001 })).toThrow(RangeError);
    expect(() => openDb({ statementCacheSize: 0 })).toThrow(RangeError);
  });
});
