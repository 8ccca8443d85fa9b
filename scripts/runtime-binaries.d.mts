/** Types of `runtime-binaries.mjs`, for the TypeScript tests that use it. */

/** A runtime as a pinned npm package. */
export interface RuntimePackage {
  /** What the tests call it, e.g. `bun`. */
  readonly name: string;
  /** The cache folder under `node_modules/.cache/`. */
  readonly folder: string;
  /** What to install, `package@exact-version`. */
  readonly spec: string;
  /** The version the binary must report. */
  readonly version: string;
  /** The binary, relative to the install prefix. */
  readonly binary: string;
  /** How to ask the binary its version. */
  readonly versionArgs: readonly string[];
}

/** What {@link ensureRuntime} did. */
export interface EnsuredRuntime {
  readonly binary: string;
  readonly installed: boolean;
  readonly seconds: number;
  readonly bytes: number;
}

export const root: string;
export const BUN: RuntimePackage;
export const DENO: RuntimePackage;
export const WORKERD: RuntimePackage;
export const NODE_NEWEST: readonly string[];
export function nodeRuntime(version: string): RuntimePackage;
export function assertLinuxX64(): void;
export function ensureRuntime(runtime: RuntimePackage): EnsuredRuntime;
