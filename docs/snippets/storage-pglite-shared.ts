// #region shared-instance
import { createAuthorizationServer } from 'portcullis';
import { openEmbeddedDatabase, pgliteStorage } from 'portcullis/pglite';

// One PGlite instance per data directory: open it once and share it with your own tables.
const db = await openEmbeddedDatabase('./.data');
await db.exec('CREATE TABLE IF NOT EXISTS app_users (id text PRIMARY KEY, email text NOT NULL)');
// Resolves once the schema is migrated and the signing keys are loaded.
const server = await createAuthorizationServer({
  issuer: 'https://auth.example.com',
  storage: pgliteStorage({ pglite: db }), // its close() leaves db open: close db yourself
});
// #endregion shared-instance
await server.close();
