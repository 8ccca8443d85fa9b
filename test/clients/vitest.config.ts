import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The client matrix on its own (`npm run test:clients`): the global setup installs or checks each
 * client (scripts/client-matrix.mjs), then each test file runs one client, unmodified, against
 * examples/mcp-server with headless Chromium as the user's browser.
 */
export default defineConfig({
  resolve: {
    alias: [
      { find: /^portcullis$/, replacement: fileURLToPath(new URL('../../src/index.ts', import.meta.url)) },
      {
        find: /^portcullis\/fetch$/,
        replacement: fileURLToPath(new URL('../../src/adapters/fetch.ts', import.meta.url)),
      },
    ],
  },
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/clients/**/*.test.ts'],
    globalSetup: ['test/clients/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
