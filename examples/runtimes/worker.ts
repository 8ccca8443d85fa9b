/**
 * The app on Cloudflare Workers, with or without the `nodejs_compat` flag: the module's default
 * export is the Worker. `ISSUER` is a variable of the Worker (`vars` in wrangler's configuration,
 * a `bindings` entry in workerd's); the runtime tests run it on workerd with both settings.
 */
// #region worker
import { createApp, type RuntimeApp } from './app.js';

/** The Worker's bindings. */
interface Env {
  readonly ISSUER: string;
}

// Workers allow no random numbers or I/O at start-up, outside a request: the server (which
// generates its signing keys) starts with the first request, and serves the later ones.
let app: Promise<RuntimeApp> | undefined;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    app ??= createApp({ issuer: env.ISSUER }).catch((error: unknown) => {
      app = undefined; // the next request tries again
      throw error;
    });
    return (await app).fetch(request);
  },
};
// #endregion worker
