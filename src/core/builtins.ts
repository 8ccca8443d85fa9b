/**
 * Optional access to runtime built-ins (`node:crypto`, `node:child_process`, ...) without importing
 * them: `process.getBuiltinModule` exists on Node 20.16+, Bun and Deno, and not on Workers or in
 * browsers, where callers fall back to Web APIs. Keeps the core free of `node:` imports.
 * @module
 */

/** The built-in module `id` (e.g. `node:crypto`), or `undefined` on runtimes that do not offer it. */
export function builtinModule<T>(id: string): T | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  try {
    return proc?.getBuiltinModule?.(id) as T | undefined;
  } catch {
    return undefined;
  }
}
