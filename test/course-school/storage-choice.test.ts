/**
 * How the reference server chooses its storage from the environment: SQLite in `DATA_DIR` by
 * default, PostgreSQL with `DATABASE_URL`, and `STORAGE` naming one explicitly.
 */
import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../../examples/course-school/src/config.js';

describe('course-school storage choice', () => {
  it('defaults to SQLite in ./.data; DATABASE_URL chooses PostgreSQL', () => {
    expect(configFromEnv({}).storage).toEqual({ kind: 'sqlite', dataDir: './.data' });
    expect(configFromEnv({ DATA_DIR: '/var/lib/school' }).storage).toEqual({
      kind: 'sqlite',
      dataDir: '/var/lib/school',
    });
    expect(configFromEnv({ DATABASE_URL: 'postgres://db/school' }).storage).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://db/school',
    });
  });

  it('STORAGE names memory, sqlite or pglite, whatever DATABASE_URL says; anything else is refused', () => {
    const url = { DATABASE_URL: 'postgres://db/school' };
    expect(configFromEnv({ ...url, STORAGE: 'memory' }).storage).toEqual({ kind: 'memory' });
    expect(configFromEnv({ ...url, STORAGE: 'sqlite' }).storage).toEqual({
      kind: 'sqlite',
      dataDir: './.data',
    });
    expect(configFromEnv({ ...url, STORAGE: 'pglite' }).storage).toEqual({
      kind: 'pglite',
      dataDir: './.data',
    });
    expect(() => configFromEnv({ STORAGE: 'redis' })).toThrow(/STORAGE/);
  });

  it('PGLITE_IMPORT_DIR goes with SQLite only', () => {
    expect(configFromEnv({ PGLITE_IMPORT_DIR: './.data-pglite' }).storage).toEqual({
      kind: 'sqlite',
      dataDir: './.data',
      importPgliteFrom: './.data-pglite',
    });
    expect(() => configFromEnv({ PGLITE_IMPORT_DIR: './old', STORAGE: 'pglite' })).toThrow(
      /PGLITE_IMPORT_DIR/,
    );
    expect(() => configFromEnv({ PGLITE_IMPORT_DIR: './old', DATABASE_URL: 'postgres://db/x' })).toThrow(
      /PGLITE_IMPORT_DIR/,
    );
  });
});
