// node:http without a framework: the same endpoints, with the connection limits of hardenServer.
import { createServer } from 'node:http';
import { createAuthorizationServer, memoryStorage } from 'portcullis';
import { hardenServer, toNodeHandler } from 'portcullis/node';

const oauth = await createAuthorizationServer({ issuer: 'http://127.0.0.1:3000', storage: memoryStorage() });

// #region node-server
const server = hardenServer(createServer(toNodeHandler(oauth)), {
  // The defaults: 10 s to send the headers, 30 s for the whole request, idle keep-alive
  // connections closed after 5 s, at most 1,024 connections open at once.
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_024,
});
server.listen(3000, '127.0.0.1');
// #endregion node-server
