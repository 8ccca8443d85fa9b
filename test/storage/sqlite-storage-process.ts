/**
 * The child process of the SQLite races across processes: opens the SQLite storage on the file
 * named by its first argument and serves it to the parent over IPC (`startStorageProcess`).
 */
import { sqliteStorage } from '../../src/storage/sqlite.js';
import { serveStorage } from '../../src/testing/index.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: sqlite-storage-process.ts <database file>');
const storage = sqliteStorage({ path: file });
await storage.keys.list(); // opened and migrated before the parent's first call
serveStorage(storage);
