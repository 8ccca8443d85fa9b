// Deno: `deno add npm:portcullis`, then `deno serve --host 127.0.0.1 --port 3000 server.ts`.
// `deno add` maps the bare `portcullis` specifier to the npm package in deno.json.
import { createAuthorizationServer, memoryStorage } from 'portcullis';
import { createFetchHandler } from 'portcullis/fetch';

const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });

export default { fetch: createFetchHandler(oauth) };
