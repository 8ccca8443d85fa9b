/**
 * `portcullis/testing`: the storage conformance kit, for our adapters and yours.
 * @module portcullis/testing
 */

export type {
  ConformanceMatchers,
  ConformanceRunner,
  StorageConformanceOptions,
} from './storage/index.js';
export { fixtures, runStorageConformance } from './storage/index.js';
