// #region runtime
import { createAuthorizationServer } from 'portcullis';
import { postgresStorage } from 'portcullis/postgres';

// A role that may not create tables: the storage checks the schema version and never migrates.
const storage = postgresStorage(
  { connectionString: process.env.DATABASE_URL ?? '', poolConfig: { max: 20 } },
  { autoMigrate: false },
);
// Rejects with a StartupError (code storage_migration_failed) while the schema is behind.
const server = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
// #endregion runtime
await server.close();
