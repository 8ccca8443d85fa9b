// #region sqlite
import { createAuthorizationServer } from 'portcullis';
import { sqliteStorage } from 'portcullis/sqlite';

// One file, ./.data/portcullis.sqlite (plus its -wal and -shm companions while open).
const storage = sqliteStorage({ dataDir: './.data' });
const server = createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
// #endregion sqlite
await server.ready();
