// Cloudflare Workers: `wrangler dev`. Workers allow randomness and I/O only while handling an
// event, so the server is started on the first request, not at the top level; a failed start is
// retried by the next request.
import { createAuthorizationServer, type Storage } from 'portcullis';
import { createFetchHandler } from 'portcullis/fetch';

/** Bindings from wrangler.toml. */
interface Env {
  /** The public origin, e.g. `https://auth.example.com`. */
  readonly ISSUER: string;
}

/** Storage that every isolate shares (see docs/storage.md): `memoryStorage()` lives in one isolate. */
declare function sharedStorage(env: Env): Storage;

let handler: Promise<(request: Request) => Promise<Response>> | undefined;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    handler ??= createAuthorizationServer({
      issuer: env.ISSUER,
      storage: sharedStorage(env),
      // No timers between requests: expired records are deleted by the Cron Trigger below.
      housekeepingIntervalSeconds: 0,
    }).then(createFetchHandler, (error: unknown) => {
      handler = undefined;
      throw error;
    });
    return (await handler)(request);
  },
  async scheduled(_controller: unknown, env: Env): Promise<void> {
    await sharedStorage(env).deleteExpired(Math.floor(Date.now() / 1000));
  },
};
