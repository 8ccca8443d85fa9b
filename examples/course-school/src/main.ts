/**
 * Entry point of `npm start`: reads the environment, starts the reference server, prints one line
 * with its base URL, and stops cleanly on SIGINT/SIGTERM.
 * @module
 */
import { startCourseSchool } from './app.js';
import { configFromEnv } from './config.js';

const app = await startCourseSchool(configFromEnv(process.env));
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
