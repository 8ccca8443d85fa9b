/**
 * ABU-07: an early refusal is read by the client. An 8 MiB registration body (64 KiB is the limit)
 * is sent by a client that writes its whole request before it reads anything, as blocking HTTP
 * clients do (Python's http.client, many SDKs). If the server closed the connection with the body
 * unread, the client's next write would fail (EPIPE, ECONNRESET) and the queued 413 would be lost;
 * the adapters read the rest of the body first, so every upload reads its 413, with and without
 * chunked framing, with keep-alive and with `Connection: close`.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExpressRouter } from '../../src/adapters/express.js';
import { toNodeHandler } from '../../src/adapters/node.js';
import { Harness } from '../helpers/harness.js';

const UPLOADS = 20;
const BODY = Buffer.alloc(8 * 1024 * 1024, 'x');
const MIB = 1024 * 1024;

/**
 * Writes the whole request, then reads. The socket is paused until the last write is done, so
 * nothing the server sends is read early: a reset before then loses it, as it would for a blocking
 * client. Resolves with the status line's code, or the error that ended the exchange.
 */
function uploadThenRead(
  port: number,
  framing: 'content-length' | 'chunked',
  close: boolean,
): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    let received = '';
    const done = (outcome: string) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      const head = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (head !== null && received.includes('\r\n\r\n')) done(head[1]!);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    socket.on('end', () => done(received === '' ? 'closed without an answer' : received.slice(0, 40)));
    const head = [
      'POST /api/oauth/register HTTP/1.1',
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${BODY.length}`,
      ...(close ? ['Connection: close'] : []),
    ];
    socket.write(`${head.join('\r\n')}\r\n\r\n`);
    if (framing === 'chunked') {
      for (let offset = 0; offset < BODY.length; offset += MIB) {
        socket.write(`${MIB.toString(16)}\r\n`);
        socket.write(BODY.subarray(offset, offset + MIB));
        socket.write('\r\n');
      }
      socket.write('0\r\n\r\n');
    } else {
      socket.write(BODY);
    }
    socket.write('', (error) => {
      if (error === undefined || error === null) socket.resume();
    });
  });
}

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
      const outcomes: Record<string, number> = {};
      for (let i = 0; i < UPLOADS; i++) {
        const outcome = await uploadThenRead(port, framing, i % 2 === 1);
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      }
      expect(outcomes).toEqual({ '413': UPLOADS });
    },
  );
});
