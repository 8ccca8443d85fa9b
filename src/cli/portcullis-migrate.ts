#!/usr/bin/env node
/**
 * The `portcullis-migrate` executable (the package's `bin`); see `./migrate-cli.ts`.
 * @module
 */
import { runMigrateCli } from './migrate-cli.js';

runMigrateCli(process.argv.slice(2), {
  env: process.env,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`portcullis-migrate: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
