import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/storage/memory.js';
import { runStorageConformance } from '../../src/testing/index.js';

// One process, one instance: memory storage cannot have a second instance over the same data, so
// its races run on one instance (each step finishes without an await, atomic in the process).
runStorageConformance({ describe, it, expect }, { name: 'memory', create: () => memoryStorage() });
