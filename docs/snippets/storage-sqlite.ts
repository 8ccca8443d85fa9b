// #region sqlite
import { createAuthorizationServer } from 'portcullis';
import { sqliteStorage } from 'portcullis/sqlite';

// One file, ./.data/portcullis.sqlite (plus its -wal and -shm companions while open).
const storage = sqliteStorage({ dataDir: './.data' });
// Opens the file, migrates its tables, loads or creates the signing keys, then resolves.
const server = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
// #endregion sqlite
await server.close();
