import { defineConfig } from 'tsup';

// The reference server and its command-line tool, compiled once for `npm start` and the benchmark
// (a TypeScript loader at run time would cost ~35 MB of resident memory). Every package, `portcullis`
// included, stays an import: the server runs on the library's published build, as users would.
export default defineConfig({
  entry: { main: 'examples/course-school/src/main.ts', cli: 'examples/course-school/src/cli.ts' },
  outDir: 'examples/course-school/dist',
  tsconfig: 'examples/course-school/tsconfig.json',
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  clean: true,
  dts: false,
  splitting: false,
  skipNodeModulesBundle: true,
  external: [/^portcullis(\/.*)?$/],
});
