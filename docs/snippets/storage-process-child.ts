// #region child
// sqlite-child.ts: started by startStorageProcess({ module, args: [file] }), it serves the storage
// on the same file as the parent's, over IPC.
import { sqliteStorage } from 'portcullis/sqlite';
import { serveStorage } from 'portcullis/testing';

const storage = sqliteStorage({ path: process.argv[2] ?? '' });
await storage.keys.list(); // opened and migrated before the parent's first call
serveStorage(storage);
// #endregion child
