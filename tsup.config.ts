import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    express: 'src/adapters/express.ts',
    fetch: 'src/adapters/fetch.ts',
    node: 'src/adapters/node.ts',
    'rate-limit': 'src/rate-limit/index.ts',
    testing: 'src/testing/index.ts',
    postgres: 'src/storage/postgres.ts',
    pglite: 'src/storage/pglite.ts',
    sqlite: 'src/storage/sqlite.ts',
    'portcullis-migrate': 'src/cli/portcullis-migrate.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  splitting: true,
  treeshake: true,
});
