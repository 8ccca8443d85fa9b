// #region import-pglite
import { openEmbeddedDatabase } from 'portcullis/pglite';
import { importPostgresStorage, openSqliteDatabase } from 'portcullis/sqlite';

// The old PGlite directory, moved aside first (mv .data .data-pglite); the new SQLite one is empty.
const pglite = await openEmbeddedDatabase('./.data-pglite');
const db = await openSqliteDatabase({ dataDir: './.data' });
const report = await importPostgresStorage(pglite, db); // one transaction: all of it or nothing
console.log(report); // { clients: 3, pendingAuthorizations: 0, codes: 12, grants: 9, ... }
await pglite.close();
db.close();
// #endregion import-pglite
