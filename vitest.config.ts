import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

/** The package's subpaths, resolved to their sources so examples and tests import `portcullis/...`. */
const subpaths: Record<string, string> = {
  portcullis: './src/index.ts',
  'portcullis/express': './src/adapters/express.ts',
  'portcullis/fetch': './src/adapters/fetch.ts',
  'portcullis/node': './src/adapters/node.ts',
  'portcullis/testing': './src/testing/index.ts',
  'portcullis/postgres': './src/storage/postgres.ts',
  'portcullis/pglite': './src/storage/pglite.ts',
  'portcullis/sqlite': './src/storage/sqlite.ts',
  'portcullis/rate-limit': './src/rate-limit/index.ts',
};

export default defineConfig({
  resolve: {
    alias: Object.entries(subpaths).map(([name, file]) => ({
      find: new RegExp(`^${name}$`),
      replacement: fileURLToPath(new URL(file, import.meta.url)),
    })),
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The consumer test installs the packed tarball: it runs on its own (`npm run test:consumer`);
    // so do the runtime matrix, which installs runtimes (`npm run test:runtimes`), and the client
    // matrix, which installs clients (`npm run test:clients`).
    exclude: [...configDefaults.exclude, 'test/consumer/**', 'test/runtimes/**', 'test/clients/**'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
