/**
 * A storage in another process, for the kit's cross-instance races: the child process opens the
 * adapter under test on the same data (the same SQLite file, PGlite directory or PostgreSQL
 * database) and serves its calls over the Node.js IPC channel; the parent gets a {@link Storage}
 * whose every call is a message to the child. Plug it into `createSecond` (or `create` too, so that
 * both sides of every race are separate processes that really run at the same time).
 *
 * Works on Node.js (and runtimes with its `child_process.fork`); no test-runner dependency.
 * @module
 */
import { builtinModule } from '../../core/builtins.js';
import { STORAGE_SHAPE } from '../../storage/shape.js';
import type { Storage } from '../../storage/types.js';

/** A call from the parent. `store` is absent for `deleteExpired` and `close`. */
interface CallMessage {
  readonly kind: 'call';
  readonly id: number;
  readonly store?: string;
  readonly method: string;
  readonly args: readonly unknown[];
}

/** The child's answer to a call. */
type ReplyMessage =
  | { readonly kind: 'reply'; readonly id: number; readonly value: unknown }
  | {
      readonly kind: 'reply';
      readonly id: number;
      readonly error: { readonly name: string; readonly message: string; readonly code?: unknown };
    };

/** Sent once by {@link serveStorage}. */
interface ReadyMessage {
  readonly kind: 'ready';
}

interface IpcProcess {
  send?(message: unknown): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
  exit(code?: number): never;
}

interface ChildProcessLike {
  readonly pid?: number;
  readonly exitCode: number | null;
  readonly signalCode: string | null;
  send(message: unknown): boolean;
  kill(signal?: string): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  once(event: 'exit', listener: (code: number | null, signal: string | null) => void): unknown;
  once(event: 'error', listener: (error: Error) => void): unknown;
}

interface ChildProcessModule {
  fork(
    modulePath: string | URL,
    args: readonly string[],
    options: {
      execArgv?: readonly string[];
      env?: Readonly<Record<string, string | undefined>>;
      serialization: 'advanced';
      stdio: readonly ('inherit' | 'ignore' | 'ipc')[];
    },
  ): ChildProcessLike;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

/** The method `call` names on `storage`, bound, or `undefined` when the contract has none such. */
function methodOf(storage: Storage, call: CallMessage): ((...args: unknown[]) => unknown) | undefined {
  const known =
    call.store === undefined
      ? call.method === 'deleteExpired' || call.method === 'close'
      : (STORAGE_SHAPE as Record<string, readonly string[]>)[call.store]?.includes(call.method) === true;
  if (!known) return undefined;
  const target: unknown =
    call.store === undefined ? storage : (storage as unknown as Record<string, unknown>)[call.store];
  if (!isObject(target)) return undefined;
  const method = target[call.method];
  return typeof method === 'function' ? (...args) => Reflect.apply(method, target, args) : undefined;
}

/**
 * In a child process started by {@link startStorageProcess}: serves `storage` to the parent over
 * the IPC channel until the parent closes it (then closes the storage and exits) or disconnects.
 * Calls are served in the order they arrive, each as soon as it arrives.
 *
 * @param storage - the adapter under test, opened on the data the parent's storage uses
 * @throws Error when the process has no IPC channel (it was not started by `startStorageProcess`)
 * @see docs/storage.md, "Writing and testing another adapter"
 * @example
 * ```ts
 * // test/my-adapter-child.ts, started by startStorageProcess({ module: ..., args: [url] })
 * import { memoryStorage } from 'portcullis';
 * import { serveStorage } from 'portcullis/testing';
 *
 * serveStorage(memoryStorage()); // yours: myStorage({ url: process.argv[2] })
 * ```
 * @group Conformance Kit
 */
export function serveStorage(storage: Storage): void {
  const proc = (globalThis as { process?: IpcProcess }).process;
  const send = proc?.send?.bind(proc);
  if (proc === undefined || send === undefined) {
    throw new Error('serveStorage: this process has no IPC channel (start it with startStorageProcess)');
  }
  proc.on('message', (message) => {
    if (!isObject(message) || message.kind !== 'call') return;
    const call = message as unknown as CallMessage;
    const method = methodOf(storage, call);
    const reply = (body: { value: unknown } | { error: { name: string; message: string; code?: unknown } }) =>
      send({ kind: 'reply', id: call.id, ...body });
    if (method === undefined) {
      reply({ error: { name: 'TypeError', message: `not a storage method: ${call.store}.${call.method}` } });
      return;
    }
    Promise.resolve()
      .then(() => method(...call.args))
      .then(
        (value) => {
          reply({ value });
          if (call.store === undefined && call.method === 'close') proc.exit(0);
        },
        (error: unknown) => {
          const e = error instanceof Error ? error : new Error(String(error));
          const code = (e as { code?: unknown }).code;
          reply({ error: { name: e.name, message: e.message, ...(code === undefined ? {} : { code }) } });
        },
      );
  });
  proc.on('disconnect', () => {
    void Promise.resolve(storage.close()).finally(() => proc.exit(0));
  });
  send({ kind: 'ready' } satisfies ReadyMessage);
}

/**
 * Options of {@link startStorageProcess}.
 *
 * @example
 * ```ts
 * import type { StorageProcessOptions } from 'portcullis/testing';
 *
 * const options: StorageProcessOptions = {
 *   module: new URL('./sqlite-child.ts', import.meta.url),
 *   args: ['/tmp/kit/portcullis.sqlite'],
 *   execArgv: ['--import', 'tsx'], // the child module is TypeScript
 * };
 * ```
 * @see docs/storage.md, "Writing and testing another adapter"
 * @group Conformance Kit
 */
export interface StorageProcessOptions {
  /** The child's entry: a module that opens the adapter on the shared data and calls {@link serveStorage}. */
  readonly module: string | URL;
  /** Arguments for the child (`process.argv[2]` onward): where the data is. */
  readonly args?: readonly string[];
  /** Node.js options of the child, e.g. `['--import', 'tsx']` for a TypeScript module. */
  readonly execArgv?: readonly string[];
  /** The child's environment (default: the parent's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How long the child may take to call `serveStorage`, in ms (default 30000). */
  readonly startTimeoutMs?: number;
}

/**
 * A storage served by a child process: `storage` forwards every call to it.
 *
 * @example
 * ```ts
 * import { type StorageProcess, startStorageProcess } from 'portcullis/testing';
 *
 * const child: StorageProcess = await startStorageProcess({ module: './child.mjs', args: ['./kit.sqlite'] });
 * console.log(await child.storage.keys.list());
 * await child.close();
 * ```
 * @see docs/storage.md, "Writing and testing another adapter"
 * @group Conformance Kit
 */
export interface StorageProcess {
  /** The storage of the child: each call is one message there and back. Its `close()` does nothing (the kit may call it per test): end the child with {@link StorageProcess.close}. */
  readonly storage: Storage;
  /** The child's process id. */
  readonly pid: number;
  /** Closes the child's storage and waits for the child to exit. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a child process that serves a storage (see {@link serveStorage}) and returns a
 * {@link Storage} that forwards every call to it, for `createSecond` of the conformance kit: the
 * races then run across two processes on the same data, as two servers on one host (or behind a
 * load balancer) would. Calls to a child that has exited reject.
 *
 * @param options - the child's module, arguments and Node.js options
 * @returns the running child and its storage
 * @throws Error when the runtime cannot fork, or the child exits or stays silent before serving
 * @see RFC 6749 §10.5, RFC 9700 §4.14.2 (the atomic steps the races check across processes)
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest';
 * import { sqliteStorage } from 'portcullis/sqlite';
 * import { runStorageConformance, startStorageProcess } from 'portcullis/testing';
 *
 * const file = '/tmp/kit/portcullis.sqlite';
 * const first = sqliteStorage({ path: file });
 * const second = await startStorageProcess({ module: './sqlite-child.mjs', args: [file] });
 * runStorageConformance(
 *   { describe, it, expect },
 *   { name: 'SQLite, two processes', create: () => first, createSecond: () => second.storage },
 * );
 * ```
 * @group Conformance Kit
 */
export async function startStorageProcess(options: StorageProcessOptions): Promise<StorageProcess> {
  const childProcess = builtinModule<ChildProcessModule>('node:child_process');
  if (childProcess === undefined) throw new Error('startStorageProcess needs node:child_process');
  const child = childProcess.fork(options.module, options.args ?? [], {
    ...(options.execArgv === undefined ? {} : { execArgv: options.execArgv }),
    ...(options.env === undefined ? {} : { env: options.env }),
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 1;
  let exitReason: string | undefined;
  let markReady: () => void = () => {};
  let failStart: (error: Error) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failStart = reject;
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitReason = `the storage process exited (${code ?? signal})`;
      for (const waiter of pending.values()) waiter.reject(new Error(exitReason));
      pending.clear();
      failStart(new Error(exitReason));
      resolve();
    });
  });
  child.once('error', (error) => failStart(error));
  child.on('message', (message) => {
    if (!isObject(message)) return;
    if (message.kind === 'ready') {
      markReady();
      return;
    }
    if (message.kind !== 'reply') return;
    const reply = message as unknown as ReplyMessage;
    const waiter = pending.get(reply.id);
    if (waiter === undefined) return;
    pending.delete(reply.id);
    if ('error' in reply) {
      const error = new Error(reply.error.message);
      error.name = reply.error.name;
      if (reply.error.code !== undefined) Object.assign(error, { code: reply.error.code });
      waiter.reject(error);
    } else {
      waiter.resolve(reply.value);
    }
  });

  const timeoutMs = options.startTimeoutMs ?? 30_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      ready,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the storage process did not serve within ${timeoutMs} ms`)),
          timeoutMs,
        );
      }),
    ]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
  }

  const call = (store: string | undefined, method: string, args: unknown[]): Promise<unknown> => {
    if (exitReason !== undefined) return Promise.reject(new Error(exitReason));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      child.send({
        kind: 'call',
        id,
        ...(store === undefined ? {} : { store }),
        method,
        args,
      } satisfies CallMessage);
    });
  };
  const stores: Record<string, unknown> = {};
  for (const [store, methods] of Object.entries(STORAGE_SHAPE)) {
    stores[store] = Object.fromEntries(
      methods.map((method) => [method, (...args: unknown[]) => call(store, method, args)]),
    );
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (exitReason === undefined) await call(undefined, 'close', []).catch(() => undefined);
      const timeout = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timeout);
    })();
    return closing;
  };
  const storage = {
    ...stores,
    deleteExpired: (now: number) => call(undefined, 'deleteExpired', [now]),
    // Closing the proxy leaves the child serving: the kit calls `release` per test; close() ends it.
    close: async () => {},
  } as unknown as Storage;
  return { storage, pid: child.pid ?? 0, close };
}
