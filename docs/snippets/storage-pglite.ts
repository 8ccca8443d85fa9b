// #region pglite
import { createAuthorizationServer } from 'portcullis';
import { pgliteStorage } from 'portcullis/pglite';

const storage = pgliteStorage({ dataDir: './.data/portcullis' });
// Opens the database, migrates the schema, loads or creates the signing keys, then resolves.
const server = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
// #endregion pglite
await server.close();
