/**
 * `portcullis/testing`: the storage conformance kit, for our adapters and yours.
 * @module portcullis/testing
 */

export type {
  ConformanceMatchers,
  ConformanceRunner,
  StorageConformanceOptions,
  StorageProcess,
  StorageProcessOptions,
} from './storage/index.js';
export { fixtures, runStorageConformance, serveStorage, startStorageProcess } from './storage/index.js';
