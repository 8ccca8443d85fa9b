/**
 * Storage that two processes share, for the cross-process revocation tests.
 *
 * - **PostgreSQL** (`postgresBackend`): the real thing, once `src/storage/postgres.ts` exists. The
 *   adapter is being written on another branch; until it lands here the backend reports why it is
 *   unavailable. `openSharedStorage` is the one place that knows how to construct it: adjust the
 *   call there if the adapter's options differ. Database: `PORTCULLIS_TEST_DATABASE_URL`, default
 *   `postgres://postgres@127.0.0.1:5432/test`.
 * - **Storage over HTTP** (`rpcBackend`): the parent's memory storage served on loopback and called
 *   method by method from the child. Not a product: it lets the cross-process machinery (child
 *   process, storage verifier in another process) run today.
 *
 * The child process (`test/fixtures/resource-server.ts`) gets a {@link SharedStorageSpec} in its
 * environment and opens the same storage with {@link openSharedStorage}.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { memoryStorage } from '../../src/storage/memory.js';
import type { Storage } from '../../src/storage/types.js';

/** How a process opens the shared storage (serialised into the child's environment). */
export type SharedStorageSpec =
  | { readonly kind: 'postgres'; readonly connectionString: string }
  | { readonly kind: 'rpc'; readonly url: string };

/** A storage the test process uses, and the spec another process opens it with. */
export interface SharedStorageBackend {
  readonly name: string;
  readonly storage: Storage;
  readonly spec: SharedStorageSpec;
  close(): Promise<void>;
}

const POSTGRES_MODULE = new URL('../../src/storage/postgres.ts', import.meta.url);

export const DATABASE_URL =
  process.env.PORTCULLIS_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Why the PostgreSQL backend cannot run in this tree, or `undefined` when it can. */
export function postgresUnavailable(): string | undefined {
  if (!existsSync(fileURLToPath(POSTGRES_MODULE))) {
    return 'src/storage/postgres.ts is not in this tree yet (the PostgreSQL adapter lands on another branch)';
  }
  return undefined;
}

/** Opens the storage a spec describes. Used by the test process and by the child. */
export async function openSharedStorage(spec: SharedStorageSpec): Promise<Storage> {
  if (spec.kind === 'rpc') return storageOverHttp(spec.url);
  // A computed specifier: the module may not exist in this tree, and tsc must not resolve it.
  const specifier = POSTGRES_MODULE.href;
  const mod: unknown = await import(specifier);
  const factory = (mod as { postgresStorage?: unknown }).postgresStorage;
  if (typeof factory !== 'function') throw new Error(`${specifier} does not export postgresStorage()`);
  // Adjust here if the adapter takes other options (a pool, a schema name, ...).
  const storage = (await (factory as (options: { connectionString: string }) => Storage | Promise<Storage>)({
    connectionString: spec.connectionString,
  })) as Storage;
  return storage;
}

/** The PostgreSQL backend (call only when {@link postgresUnavailable} returns `undefined`). */
export async function postgresBackend(): Promise<SharedStorageBackend> {
  const spec: SharedStorageSpec = { kind: 'postgres', connectionString: DATABASE_URL };
  const storage = await openSharedStorage(spec);
  return { name: 'PostgreSQL', storage, spec, close: () => storage.close() };
}

// ---------------------------------------------------------------------------------------------
// Storage over HTTP

// The contract's methods, read off the reference implementation rather than listed again: `close`,
// `deleteExpired`, and `store/method` for the methods of each store.
const reference = memoryStorage();
const STORES = Object.keys(reference).filter(
  (key) => typeof reference[key as keyof Storage] === 'object',
) as (keyof Storage)[];
const METHODS: readonly string[] = [
  ...Object.keys(reference).filter((key) => typeof reference[key as keyof Storage] === 'function'),
  ...STORES.flatMap((store) => Object.keys(reference[store]).map((method) => `${store}/${method}`)),
];

type AnyMethod = (...args: unknown[]) => Promise<unknown>;

/** The method `path` (`grants/revoke`, `deleteExpired`) names on `storage`. */
function methodAt(storage: Storage, path: string): AnyMethod | undefined {
  if (!METHODS.includes(path) || path === 'close') return undefined;
  const [first, second] = path.split('/') as [string, string | undefined];
  const owner = (second === undefined ? storage : storage[first as keyof Storage]) as unknown as Record<
    string,
    AnyMethod
  >;
  const method = owner[second ?? first];
  return method === undefined ? undefined : (...args) => method.apply(owner, args);
}

/** A {@link Storage} whose every call is a POST to `url/<store>/<method>` with the arguments as JSON. */
export function storageOverHttp(url: string): Storage {
  const call =
    (path: string): AnyMethod =>
    async (...args) => {
      const response = await fetch(`${url}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(args),
      });
      const reply = (await response.json()) as { result?: unknown; error?: string };
      if (!response.ok) throw new Error(`shared storage ${path} failed: ${reply.error ?? response.status}`);
      return reply.result;
    };
  const client: Record<string, unknown> = { close: async () => {}, deleteExpired: call('deleteExpired') };
  for (const store of STORES) {
    client[store] = Object.fromEntries(
      Object.keys(reference[store]).map((method) => [method, call(`${store}/${method}`)]),
    );
  }
  return client as unknown as Storage;
}

/** Serves `storage` to other processes on a loopback port. */
export async function rpcBackend(storage: Storage): Promise<SharedStorageBackend> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').slice(1);
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      const method = methodAt(storage, path);
      if (method === undefined) return reply(404, { error: `no method ${path}` });
      const args = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown[];
      method(...args).then(
        (result) => reply(200, { result }),
        (error: unknown) => reply(500, { error: String(error) }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    name: 'storage over HTTP',
    storage,
    spec: { kind: 'rpc', url },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
