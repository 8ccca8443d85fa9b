// #region postgres
import { createAuthorizationServer } from 'portcullis';
import { postgresStorage } from 'portcullis/postgres';

// The storage makes its own pool, and closes it on storage.close() ...
const storage = postgresStorage({ connectionString: process.env.DATABASE_URL ?? '' });
// ... or shares yours, and leaves it open: postgresStorage({ pool }, { schema: 'auth' })
// Connects and migrates the schema before it resolves (a StartupError says what failed).
const server = await createAuthorizationServer({ issuer: 'https://auth.example.com', storage });
// #endregion postgres
await server.close();
