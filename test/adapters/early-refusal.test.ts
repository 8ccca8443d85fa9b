/**
 * ABU-07: an early refusal is read by the client. An 8 MiB registration body (64 KiB is the limit)
 * is sent by a client that writes its whole request before it reads anything, as blocking HTTP
 * clients do (Python's http.client, many SDKs). If the server closed the connection with the body
 * unread, the client's next write would fail (EPIPE, ECONNRESET) and the queued 413 would be lost;
 * the adapters read the rest of the body first, so every upload reads its 413, with and without
 * chunked framing, with keep-alive and with `Connection: close`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExpressRouter } from '../../src/adapters/express.js';
import { toNodeHandler } from '../../src/adapters/node.js';
import { Harness } from '../helpers/harness.js';
import { uploadOutcomes } from '../helpers/upload-then-read.js';

const UPLOADS = 20;
const BODY = Buffer.alloc(8 * 1024 * 1024, 'x');

let h: Harness;
const servers: Record<string, Server> = {};

beforeAll(async () => {
  h = await Harness.start();
  const app = express();
  app.use(createExpressRouter(h.server));
  servers.node = createServer(toNodeHandler(h.server));
  servers.express = createServer(app);
  for (const server of Object.values(servers)) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  }
});

afterAll(async () => {
  for (const server of Object.values(servers)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await h.close();
});

describe.each(['node', 'express'])('early refusal through the %s adapter (ABU-07)', (adapter) => {
  it.each(['content-length', 'chunked'] as const)(
    `${UPLOADS} of ${UPLOADS} uploads of 8 MiB (%s) read their 413, keep-alive or not`,
    async (framing) => {
      const port = (servers[adapter]!.address() as AddressInfo).port;
      const outcomes = await uploadOutcomes(port, UPLOADS, {
        path: '/api/oauth/register',
        body: BODY,
        framing,
      });
      expect(outcomes).toEqual({ '413': UPLOADS });
    },
  );
});
