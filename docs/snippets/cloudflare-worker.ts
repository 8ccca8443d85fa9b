// Cloudflare Workers: `wrangler dev`. Workers allow randomness and I/O only while handling an
// event, so the server is created on the first request, not at the top level.
import { createAuthorizationServer, type Storage } from 'portcullis';
import { createFetchHandler } from 'portcullis/fetch';

/** Bindings from wrangler.toml. */
interface Env {
  /** The public origin, e.g. `https://auth.example.com`. */
  readonly ISSUER: string;
}

/** Storage that every isolate shares (see docs/storage.md): `memoryStorage()` lives in one isolate. */
declare function sharedStorage(env: Env): Storage;

let handler: ((request: Request) => Promise<Response>) | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    handler ??= createFetchHandler(
      createAuthorizationServer({
        issuer: env.ISSUER,
        storage: sharedStorage(env),
        // No timers between requests: expired records are deleted by the Cron Trigger below.
        housekeepingIntervalSeconds: 0,
      }),
    );
    return handler(request);
  },
  async scheduled(_controller: unknown, env: Env): Promise<void> {
    await sharedStorage(env).deleteExpired(Math.floor(Date.now() / 1000));
  },
};
