/**
 * Before the runtime matrix: installs each pinned runtime (once; then from
 * `node_modules/.cache/`) and bundles the fixture `examples/runtimes/` into one ES module per
 * runtime, with the library from `src/` and its dependencies (jose, zod) inlined, as a Workers
 * deployment bundles it. A runtime that cannot be installed is reported to the tests, which fail
 * under `CI=true` and skip otherwise.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';
import {
  BUN,
  DENO,
  ensureRuntime,
  NODE_NEWEST,
  nodeRuntime,
  type RuntimePackage,
  root,
  WORKERD,
} from '../../scripts/runtime-binaries.mjs';

/** Node 20 at the floor `engines.node` admits, where `process.getBuiltinModule` is newest. */
const NODE_20 = '20.19.0';

/** The runtimes, by the name the tests use. */
export const RUNTIME_PACKAGES: Readonly<Record<string, RuntimePackage>> = {
  bun: BUN,
  deno: DENO,
  workerd: WORKERD,
  ...Object.fromEntries([NODE_20, ...NODE_NEWEST].map((v) => [`node${v.split('.')[0]}`, nodeRuntime(v)])),
};

/** A runtime's binary, or why there is none. */
export type InstalledRuntime =
  | { readonly binary: string; readonly version: string }
  | { readonly error: string };

declare module 'vitest' {
  export interface ProvidedContext {
    runtimes: Record<string, InstalledRuntime>;
    /** The folder holding `node.mjs`, `bun.mjs`, `deno.mjs` and `worker.mjs`. */
    bundles: string;
  }
}

/** The library's subpaths, resolved to their sources (as in vitest.config.ts). */
const SUBPATHS: Record<string, string> = {
  portcullis: 'src/index.ts',
  'portcullis/fetch': 'src/adapters/fetch.ts',
};

export default async function setup(project: TestProject): Promise<() => void> {
  const runtimes: Record<string, InstalledRuntime> = {};
  const started = performance.now();
  for (const [name, runtime] of Object.entries(RUNTIME_PACKAGES)) {
    try {
      const ensured = ensureRuntime(runtime);
      runtimes[name] = { binary: ensured.binary, version: runtime.version };
      if (ensured.installed) {
        console.log(
          `installed ${runtime.spec} in ${ensured.seconds.toFixed(1)} s (${(ensured.bytes / 2 ** 20).toFixed(0)} MiB on disk)`,
        );
      }
    } catch (error) {
      runtimes[name] = { error: error instanceof Error ? error.message : String(error) };
    }
  }
  console.log(`runtimes ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const bundles = mkdtempSync(join(tmpdir(), 'portcullis-runtimes-'));
  const alias = Object.fromEntries(Object.entries(SUBPATHS).map(([name, file]) => [name, join(root, file)]));
  // One ES module per runtime; the code is the same, only the entry (how it is served) differs.
  const entries = [
    { entry: 'node.ts', platform: 'node', conditions: ['node'] },
    { entry: 'bun.ts', platform: 'neutral', conditions: ['bun'] },
    { entry: 'deno.ts', platform: 'neutral', conditions: ['deno'] },
    { entry: 'worker.ts', platform: 'neutral', conditions: ['workerd', 'worker', 'browser'] },
  ] as const;
  await Promise.all(
    entries.map(({ entry, platform, conditions }) =>
      build({
        entryPoints: [join(root, 'examples', 'runtimes', entry)],
        outfile: join(bundles, entry.replace(/\.ts$/, '.mjs')),
        bundle: true,
        format: 'esm',
        target: 'es2022',
        platform,
        conditions: [...conditions],
        mainFields: ['module', 'main'],
        alias,
        logLevel: 'warning',
        // Bundled CommonJS that calls require() for node built-ins needs a require on Node.
        banner:
          platform === 'node'
            ? {
                js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
              }
            : {},
      }),
    ),
  );

  project.provide('runtimes', runtimes);
  project.provide('bundles', bundles);
  return () => rmSync(bundles, { recursive: true, force: true });
}
