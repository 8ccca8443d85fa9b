import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The runtime matrix on its own (`npm run test:runtimes`): the global setup installs the pinned
 * runtimes and bundles the fixture, then each runtime serves it in turn.
 */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/runtimes/**/*.test.ts'],
    globalSetup: ['test/runtimes/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
