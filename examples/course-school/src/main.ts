/**
 * Entry point of `npm start`: reads the environment, starts the reference server, prints one line
 * with its base URL, and stops cleanly on SIGINT/SIGTERM. A configuration it refuses (a bad value,
 * demo accounts on an https issuer) stops it with one line saying why, and exit code 1.
 * @module
 */
import { setFlagsFromString } from 'node:v8';
import { startCourseSchool } from './app.js';
import { type AppConfig, configFromEnv } from './config.js';

let config: AppConfig;
try {
  config = configFromEnv(process.env);
} catch (error) {
  console.error(`course-school: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
// The embedded default runs PostgreSQL compiled to WebAssembly (a 9 MB module). V8 would compile it
// a second time with its optimising tier and keep both copies: about 60 MB more resident memory, for
// no gain we could measure. Set before PGlite compiles anything; PGlite is the only WebAssembly here.
if (config.storage.kind === 'pglite') setFlagsFromString('--liftoff-only');
const app = await startCourseSchool(config);
console.log(
  `course-school listening on ${app.issuer} (socket ${app.address}, storage: ${app.storageDescription})`,
);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  app.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(`shutdown after ${signal} failed:`, error);
      process.exit(1);
    },
  );
};
process.once('SIGINT', () => stop('SIGINT'));
process.once('SIGTERM', () => stop('SIGTERM'));
