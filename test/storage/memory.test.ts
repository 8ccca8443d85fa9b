import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/storage/memory.js';
import { runStorageConformance } from '../../src/testing/storage-conformance.js';

runStorageConformance({ describe, it, expect }, { name: 'memory', create: () => memoryStorage() });
