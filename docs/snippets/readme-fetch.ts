// #region quick-start
import { createAuthorizationServer, memoryStorage } from 'portcullis';
import { createFetchHandler } from 'portcullis/fetch';

const oauth = await createAuthorizationServer({
  issuer: 'https://auth.example.com',
  storage: memoryStorage(),
});
export default { fetch: createFetchHandler(oauth) };
// #endregion quick-start
