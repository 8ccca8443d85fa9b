/**
 * The app on Deno: `deno run --allow-net --allow-env=PORT,ISSUER main.ts` in a project where
 * `portcullis` is installed (`deno add npm:portcullis`). The runtime tests run it bundled.
 */
// #region serve
import { createApp } from './app.js';

const port = Number(Deno.env.get('PORT') ?? 3000);
const issuer = Deno.env.get('ISSUER') ?? `http://127.0.0.1:${port}`;
const app = await createApp({ issuer });
Deno.serve({ hostname: '127.0.0.1', port, onListen: () => console.log(`listening on ${issuer}`) }, app.fetch);
// #endregion serve

/** The part of Deno's global this file uses (Deno knows its own types). */
declare const Deno: {
  env: { get(name: string): string | undefined };
  serve(
    options: { hostname: string; port: number; onListen?: () => void },
    handler: (request: Request) => Promise<Response>,
  ): unknown;
};
