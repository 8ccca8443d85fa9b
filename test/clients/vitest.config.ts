import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * The client matrix on its own (`npm run test:clients`): the global setup installs or checks each
 * client (scripts/client-matrix.mjs), then each test file runs one client, unmodified, against
 * examples/mcp-server (or the reference server) with headless Chromium as the user's browser. The
 * package's subpaths resolve to the sources, as in the main configuration.
 */
export default defineConfig({
  resolve: { alias: base.resolve?.alias ?? [] },
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/clients/**/*.test.ts'],
    globalSetup: ['test/clients/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
