/**
 * What every client of the matrix needs: examples/mcp-server listening on a loopback port, with a
 * clock the test can move forward (to expire access tokens) and its events recorded; a browser
 * for the client to open (`BROWSER` → open-in-chromium.mjs, which signs in and allows in headless
 * Chromium, and logs each opening); a clean home for the client's stored state; and the rule for a
 * missing client: FAIL under `CI=true`, skip otherwise.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServerType, serve } from '@hono/node-server';
import { inject, vi } from 'vitest';
import { createMcpExample, type McpExample } from '../../examples/mcp-server/server.js';
import type { AuthorizationServerEvent } from '../../src/core/events.js';
import type { Available, ClientMatrix } from './global-setup.js';

/** The script clients get as their browser. */
export const OPENER = fileURLToPath(new URL('./open-in-chromium.mjs', import.meta.url));

/** The tool that needs a user, and what it answers for ada. */
export const NOTES_TOOL = 'list_my_notes';
export const ADA_NOTES = ['Buy milk', 'Fix the engine'];

/**
 * The client `name` of the matrix, or: under `CI=true` an error (a CI image without the client
 * must not pass), elsewhere `skip` with the reason.
 */
export function requireClient<K extends keyof ClientMatrix>(
  name: K,
  skip: (note: string) => void,
): Extract<ClientMatrix[K], { ok: true }> {
  const clients = inject('clients');
  for (const [what, available] of [
    [name, clients[name]],
    ['chromium', clients.chromium],
  ] as const) {
    if (!(available as Available<object>).ok) {
      const message = `${what}: ${(available as { error: string }).error}`;
      if (process.env.CI === 'true') throw new Error(`${message} (required when CI=true)`);
      skip(message);
    }
  }
  return clients[name] as Extract<ClientMatrix[K], { ok: true }>;
}

/** One opening of the browser, as open-in-chromium.mjs logged it. */
export interface Opening {
  readonly opened: string;
  readonly landed?: string;
  readonly error?: string;
}

/** The example server, the client's home and browser, for one test file. */
export interface ClientBench {
  readonly example: McpExample;
  /** `http://127.0.0.1:<port>`: the issuer. */
  readonly origin: string;
  /** The MCP server's URL. */
  readonly mcp: string;
  readonly events: AuthorizationServerEvent[];
  /** A fresh directory standing in for the user's home. */
  readonly home: string;
  /** The environment of a client process: no vitest variables, the home, the browser. */
  readonly env: Record<string, string>;
  /** Moves the authorization server's clock forward. */
  advance(seconds: number): void;
  /** The browser openings so far. */
  openings(): Opening[];
  /**
   * The openings after the first `since`, once there are `count` of them: the browser logs an
   * opening when it is done, which may be just after the client has its code and moved on.
   */
  openedSince(since: number, count: number): Promise<Opening[]>;
  /** The events of one kind for one client. */
  eventsOf(type: AuthorizationServerEvent['type'], clientId: string): AuthorizationServerEvent[];
  close(): Promise<void>;
}

export async function startBench(): Promise<ClientBench> {
  let skew = 0;
  const events: AuthorizationServerEvent[] = [];
  let example: McpExample | undefined;
  const http = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: (request) => example!.fetch(request), hostname: '127.0.0.1', port: 0 }, () =>
      resolve(s),
    );
  });
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  example = await createMcpExample(origin, {
    clock: () => Date.now() + skew,
    onEvent: (event) => {
      events.push(event);
    },
  });
  const home = mkdtempSync(join(tmpdir(), 'portcullis-client-home-'));
  const log = join(home, 'openings.jsonl');
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('VITEST') && key !== 'NODE_OPTIONS') env[key] = value;
  }
  Object.assign(env, {
    HOME: home,
    BROWSER: OPENER,
    PORTCULLIS_OPENER_LOG: log,
    PORTCULLIS_OPENER_LOGIN: JSON.stringify({ name: 'ada' }),
  });
  const openings = (): Opening[] =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as Opening)
      : [];
  return {
    example,
    origin,
    mcp: `${origin}/mcp`,
    events,
    home,
    env,
    advance(seconds) {
      skew += seconds * 1000;
    },
    openings,
    async openedSince(since, count) {
      await vi.waitFor(
        () => {
          if (openings().length < since + count) throw new Error(`fewer than ${count} openings`);
        },
        { timeout: 20_000, interval: 50 },
      );
      return openings().slice(since);
    },
    eventsOf(type, clientId) {
      return events.filter((e) => e.type === type && 'clientId' in e && e.clientId === clientId);
    },
    async close() {
      await example?.oauth.close();
      (http as Server).closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      // A browser that is still closing may be writing its profile under this home.
      rmSync(home, { recursive: true, force: true, maxRetries: 10 });
    },
  };
}

/** What a finished client process wrote. */
export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a client program to its end, killed after `timeoutMs`. */
export function run(
  command: string,
  args: readonly string[],
  options: { env: Record<string, string>; cwd?: string; timeoutMs?: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The JSON lines a Python or Go client printed, by step. */
export function steps(output: string): Record<string, Record<string, unknown>> {
  const byStep: Record<string, Record<string, unknown>> = {};
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as Record<string, unknown>;
    byStep[String(entry.step)] = entry;
  }
  return byStep;
}

/** Revokes a token as its client would (RFC 7009), for clients that have no revocation. */
export async function revokeByHttp(
  bench: ClientBench,
  token: string,
  client: { clientId: string; secret?: string },
): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const body = new URLSearchParams({ token, token_type_hint: 'refresh_token' });
  if (client.secret === undefined) body.set('client_id', client.clientId);
  else
    headers.authorization = `Basic ${btoa(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.secret)}`)}`;
  const response = await fetch(`${bench.origin}/oauth/revoke`, { method: 'POST', headers, body });
  return response.status;
}
