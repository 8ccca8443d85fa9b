/**
 * Entry point of `npm start`: reads the environment, starts the reference server, prints one line
 * with its base URL, and stops cleanly on SIGINT/SIGTERM. A configuration it refuses (a bad value,
 * demo accounts on an https issuer) or a start that fails (the database unreachable, the library's
 * `StartupError`) stops it with one line saying why, and exit code 1.
 * @module
 */
import { setFlagsFromString } from 'node:v8';
import { InvalidOptionsError, StartupError } from 'portcullis';
import { type CourseSchoolServer, startCourseSchool } from './app.js';
import { type AppConfig, configFromEnv } from './config.js';

/**
 * One line for a start that failed. The library's `StartupError` names what failed in its `code`
 * (`storage_unavailable`: check DATABASE_URL or DATA_DIR; `signing_keys_unavailable`: the keys in
 * storage) and carries the underlying error's message; other failures (our own tables) say theirs.
 */
function startFailure(error: unknown): string {
  if (error instanceof StartupError) {
    // The keys in storage are wrapped and KEY_WRAPPING_SECRET is unset (the library names its option;
    // a secret that does not open them says so in the message already).
    const hint =
      error.code === 'signing_keys_unavailable' && error.message.includes('configure keys.wrapping')
        ? '; KEY_WRAPPING_SECRET must be the secret the keys were stored with'
        : '';
    return `the authorization server did not start: ${error.message}${hint}`;
  }
  if (error instanceof InvalidOptionsError) {
    return `the authorization server's options are invalid: ${error.message}`;
  }
  return `could not start: ${error instanceof Error ? error.message : String(error)}`;
}

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
let app: CourseSchoolServer;
try {
  app = await startCourseSchool(config);
} catch (error) {
  console.error(`course-school: ${startFailure(error)}`);
  process.exit(1);
}
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
