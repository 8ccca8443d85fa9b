// #region runtime
import { createAuthorizationServer } from 'portcullis';
import { postgresStorage } from 'portcullis/postgres';

// A role that may not create tables: the storage checks the schema version and never migrates.
const storage = postgresStorage(
  { connectionString: process.env.DATABASE_URL ?? '', poolConfig: { max: 20 } },
  { autoMigrate: false },
);
const server = createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
// #endregion runtime
await server.ready();
