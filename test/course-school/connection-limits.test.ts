/**
 * The reference server's HTTP server bounds what slow or numerous clients can hold: a client that
 * never finishes its headers is answered `408` and disconnected (RFC 9110 §15.5.9), and connections
 * beyond the cap are closed unanswered (the library's `hardenServer`, with the limits of
 * `config.ts`, shortened here so the test takes a second).
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { DEFAULT_CONNECTION_LIMITS } from '../../examples/course-school/src/config.js';
import { startTestServer } from '../helpers/course-school.js';

let school: CourseSchoolServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await school?.close();
  school = undefined;
});

/** Opens a connection; resolves once connected. */
function open(server: CourseSchoolServer): Promise<Socket> {
  const [host, port] = [
    server.address.slice(0, server.address.lastIndexOf(':')),
    server.address.split(':').pop(),
  ];
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: Number(port) }, () => resolve(socket));
    socket.once('error', reject);
    sockets.push(socket);
  });
}

/** Everything the server sends until it closes the connection, or `undefined` after `limitMs`. */
function untilClosed(socket: Socket, limitMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    const timer = setTimeout(() => resolve(undefined), limitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

describe('connection limits of the reference server', () => {
  it('defaults to bounded header and request times, a keep-alive above common proxies’ 60 s, and a connection cap', () => {
    expect(DEFAULT_CONNECTION_LIMITS).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 1_000,
    });
  });

  it('answers 408 and disconnects a client that does not finish its headers in time (RFC 9110 §15.5.9)', async () => {
    school = await startTestServer(
      {},
      {
        connectionLimits: {
          ...DEFAULT_CONNECTION_LIMITS,
          headersTimeoutMs: 300,
          requestTimeoutMs: 600,
        },
      },
    );
    const socket = await open(school);
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const received = await untilClosed(socket, 5_000);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes connections beyond the cap unanswered, while those within it are served', async () => {
    school = await startTestServer(
      {},
      { connectionLimits: { ...DEFAULT_CONNECTION_LIMITS, maxConnections: 2 } },
    );
    const within = [await open(school), await open(school)];
    const beyond = await open(school);
    beyond.write('GET /llms.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(await untilClosed(beyond, 5_000)).toBe('');
    const answered = new Promise<string>((resolve) =>
      within[0]!.once('data', (chunk: Buffer) => resolve(chunk.toString())),
    );
    within[0]!.write('GET /llms.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(await answered).toMatch(/^HTTP\/1\.1 200 /);
  });
});
