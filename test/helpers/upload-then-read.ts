/**
 * ABU-07: an upload by a client that writes its whole request before it reads anything, as
 * blocking HTTP clients do (Python's http.client, many SDKs). If the server closed the connection
 * with the body unread, the client's next write would fail (EPIPE, ECONNRESET) and the queued
 * early answer (413, 400) would be lost. Shared by the adapters' test and the reference server's.
 */
import { connect } from 'node:net';

/** How a test upload is sent. */
export interface UploadOptions {
  /** Request target, e.g. `/api/oauth/register`. */
  readonly path: string;
  /** The `Host` header (the reference server refuses other hosts); default `127.0.0.1`. */
  readonly host?: string;
  /** Further headers, e.g. `Authorization`; `Content-Type` defaults to `application/json`. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  /** `Content-Length`, or chunked framing in 1 MiB chunks. */
  readonly framing: 'content-length' | 'chunked';
  /** Send `Connection: close`. */
  readonly close: boolean;
}

const MIB = 1024 * 1024;

/**
 * Writes the whole request, then reads. The socket is paused until the last write is done, so
 * nothing the server sends is read early: a reset before then loses it, as it would for a blocking
 * client. Resolves with the status line's code, or the error that ended the exchange.
 *
 * @param port - the server's port on 127.0.0.1
 * @param options - the request
 * @returns `'413'`, another status code, or the error code (`EPIPE`, `ECONNRESET`, ...)
 */
export function uploadThenRead(port: number, options: UploadOptions): Promise<string> {
  const { body, framing } = options;
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
    const headers: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers };
    const head = [
      `POST ${options.path} HTTP/1.1`,
      `Host: ${options.host ?? '127.0.0.1'}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`,
      ...(options.close ? ['Connection: close'] : []),
    ];
    socket.write(`${head.join('\r\n')}\r\n\r\n`);
    if (framing === 'chunked') {
      for (let offset = 0; offset < body.length; offset += MIB) {
        const chunk = body.subarray(offset, offset + MIB);
        socket.write(`${chunk.length.toString(16)}\r\n`);
        socket.write(chunk);
        socket.write('\r\n');
      }
      socket.write('0\r\n\r\n');
    } else {
      socket.write(body);
    }
    socket.write('', (error) => {
      if (error === undefined || error === null) socket.resume();
    });
  });
}

/**
 * Sends `count` uploads one after the other (every second one with `Connection: close`) and counts
 * the outcomes, e.g. `{ '413': 20 }`.
 */
export async function uploadOutcomes(
  port: number,
  count: number,
  options: Omit<UploadOptions, 'close'>,
): Promise<Record<string, number>> {
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < count; i++) {
    const outcome = await uploadThenRead(port, { ...options, close: i % 2 === 1 });
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  return outcomes;
}
