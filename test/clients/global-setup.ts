/**
 * Before the client matrix: installs the pinned npm clients (once; then from
 * `node_modules/.cache/clients/`), finds the Inspector's Node, checks Debian's Python client
 * libraries, builds the Go client, and looks for Chromium. What is missing is reported to the
 * tests, which fail under `CI=true` and skip otherwise.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import {
  buildGoClient,
  checkPythonClients,
  ensureNpmClients,
  inspectorNode,
} from '../../scripts/client-matrix.mjs';
import { CHROMIUM_PATH, MISSING_BROWSER_MESSAGE } from '../helpers/browser.js';

/** A client ready to run, or why it is not. */
export type Available<T> = ({ readonly ok: true } & T) | { readonly ok: false; readonly error: string };

/** What the tests get. */
export interface ClientMatrix {
  readonly mcpRemote: Available<{ readonly entry: string }>;
  readonly inspector: Available<{ readonly entry: string; readonly node: string }>;
  readonly python: Available<{ readonly authlib: string; readonly requestsOauthlib: string }>;
  readonly go: Available<{ readonly binary: string; readonly version: string }>;
  readonly chromium: Available<{ readonly path: string }>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    clients: ClientMatrix;
  }
}

function attempt<T>(work: () => T): Available<T> {
  try {
    return { ok: true, ...work() };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

export default function setup(project: TestProject): () => void {
  const started = performance.now();
  const npm = attempt(() => {
    const installed = ensureNpmClients();
    if (installed.installed) console.log(`installed the npm clients in ${installed.seconds.toFixed(1)} s`);
    return installed;
  });
  const out = mkdtempSync(join(tmpdir(), 'portcullis-clients-'));
  const clients: ClientMatrix = {
    mcpRemote: npm.ok ? { ok: true, entry: npm.mcpRemote } : npm,
    inspector: npm.ok ? attempt(() => ({ entry: npm.inspector, node: inspectorNode() })) : npm,
    python: attempt(checkPythonClients),
    go: attempt(() => {
      const built = buildGoClient(out);
      return { binary: built.binary, version: built.go };
    }),
    chromium: existsSync(CHROMIUM_PATH)
      ? { ok: true, path: CHROMIUM_PATH }
      : { ok: false, error: MISSING_BROWSER_MESSAGE },
  };
  console.log(`clients ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  project.provide('clients', clients);
  return () => rmSync(out, { recursive: true, force: true });
}
