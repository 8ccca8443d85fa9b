// #region postgres
import { createAuthorizationServer } from 'portcullis';
import { postgresStorage } from 'portcullis/postgres';

// The storage makes its own pool, and closes it on storage.close() ...
const storage = postgresStorage({ connectionString: process.env.DATABASE_URL ?? '' });
// ... or shares yours, and leaves it open: postgresStorage({ pool }, { schema: 'auth' })
const server = createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
// #endregion postgres
await server.ready();
