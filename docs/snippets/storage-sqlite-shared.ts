// #region shared-database
import { createAuthorizationServer } from 'portcullis';
import { openSqliteDatabase, sqliteStorage } from 'portcullis/sqlite';

// Open the file once and keep your own tables beside the storage's (which are prefixed portcullis_).
const db = await openSqliteDatabase({ dataDir: './.data' });
db.exec('CREATE TABLE IF NOT EXISTS app_users (id TEXT PRIMARY KEY, email TEXT NOT NULL) STRICT');
const server = await createAuthorizationServer({
  issuer: 'https://auth.example.com',
  storage: sqliteStorage({ database: db }), // its close() leaves db open: close db yourself
});
// #endregion shared-database
await server.close();
