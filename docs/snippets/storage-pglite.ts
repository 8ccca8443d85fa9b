// #region pglite
import { createAuthorizationServer } from 'portcullis';
import { pgliteStorage } from 'portcullis/pglite';

const storage = pgliteStorage({ dataDir: './.data/portcullis' });
const server = createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
await server.ready(); // opens the database, migrates the schema, loads or creates the signing keys
// #endregion pglite
