/** Types of `client-matrix.mjs`, for the TypeScript tests that use it. */

/** The Debian packages of the matrix's Python and Go clients. */
export const DEBIAN_PACKAGES: readonly string[];
/** Debian's Python. */
export const PYTHON: string;
/** The environment of Go in GOPATH mode over the Debian packages. */
export const GO_ENV: Readonly<Record<string, string>>;

/** Installs the pinned npm clients unless they are there. */
export function ensureNpmClients(): {
  readonly mcpRemote: string;
  readonly inspector: string;
  readonly installed: boolean;
  readonly seconds: number;
};
/** The Node the Inspector runs on. */
export function inspectorNode(): string;
/** Versions of Debian's authlib and requests-oauthlib; throws when missing. */
export function checkPythonClients(): { readonly authlib: string; readonly requestsOauthlib: string };
/** Builds the Go client into `outDir`; throws when Go or x/oauth2 is missing. */
export function buildGoClient(outDir: string): { readonly binary: string; readonly go: string };
