// Bun: `bun run server.ts`. Bun serves the default export's `fetch`.
import { createAuthorizationServer, memoryStorage } from 'portcullis';
import { createFetchHandler } from 'portcullis/fetch';

const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });

export default {
  port: 3000,
  hostname: '127.0.0.1',
  fetch: createFetchHandler(oauth),
};
