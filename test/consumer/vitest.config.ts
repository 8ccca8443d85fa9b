import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** The consumer test on its own: it packs and installs the package, so it is slower than the unit tests. */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/consumer/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
});
