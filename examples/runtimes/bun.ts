/**
 * The app on Bun: `PORT=3000 bun examples/runtimes/bun.ts` (Bun reads TypeScript and the
 * repository's tsconfig paths; in your project, `portcullis` is the installed package).
 */
// #region serve
import { createApp } from './app.js';

const port = Number(Bun.env.PORT ?? 3000);
const issuer = Bun.env.ISSUER ?? `http://127.0.0.1:${port}`;
const app = await createApp({ issuer });
Bun.serve({ hostname: '127.0.0.1', port, fetch: app.fetch });
console.log(`listening on ${issuer}`);
// #endregion serve

/** The part of Bun's global this file uses (install `@types/bun` in a Bun project instead). */
declare const Bun: {
  env: Record<string, string | undefined>;
  serve(options: { hostname: string; port: number; fetch: (request: Request) => Promise<Response> }): {
    readonly port: number;
  };
};
