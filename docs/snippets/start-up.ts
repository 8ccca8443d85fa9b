import {
  type AuthorizationServer,
  createAuthorizationServer,
  InvalidOptionsError,
  StartupError,
} from 'portcullis';
import { postgresStorage } from 'portcullis/postgres';

// #region start-up
/** Starts the authorization server, or exits with what failed. */
async function startOAuth(): Promise<AuthorizationServer> {
  try {
    return await createAuthorizationServer({
      issuer: 'https://auth.example.com',
      storage: postgresStorage({ connectionString: process.env.DATABASE_URL ?? '' }),
    });
  } catch (error) {
    if (error instanceof InvalidOptionsError) {
      console.error(error.problems.join('\n')); // one line per bad option
    } else if (error instanceof StartupError) {
      // storage_unavailable, storage_migration_failed, signing_keys_unavailable or invalid_configuration
      console.error(`cannot start (${error.code}):`, error.cause);
    }
    process.exit(1);
  }
}

const oauth = await startOAuth();
// #endregion start-up
await oauth.close();
