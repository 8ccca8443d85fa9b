import { createAuthorizationServer, createScopePolicy, defineScopes } from 'portcullis';
import { postgresStorage } from 'portcullis/postgres';

const oauth = await createAuthorizationServer({
  issuer: 'https://auth.example.com',
  storage: postgresStorage({ connectionString: process.env.DATABASE_URL ?? '' }),
  scopePolicy: createScopePolicy({
    registry: defineScopes([{ name: 'reports:read', description: 'Read reports' }]),
  }),
  // #region configured-agent
  clientCredentials: { enabled: true },
  clients: [
    {
      clientId: 'nightly-report',
      clientSecret: process.env.NIGHTLY_REPORT_SECRET ?? '', // or private_key_jwt with jwksUri
      tokenEndpointAuthMethod: 'client_secret_basic',
      grantTypes: ['client_credentials'], // no redirect URI needed
      scope: 'reports:read',
    },
  ],
  // #endregion configured-agent
});
await oauth.close();
