/**
 * A raw TCP connection to a test server: writes exactly the bytes given (repeated headers, split
 * UTF-8, chunked framing, pipelined requests) and reads whole HTTP/1.1 responses off it.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The status line and header lines as sent (repeats visible). */
  head: string;
}

export class RawConnection {
  readonly socket: Socket;
  #buffer = Buffer.alloc(0);
  #ended = false;
  #waiters: Array<() => void> = [];

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#wake();
    });
    this.socket.on('close', () => {
      this.#ended = true;
      this.#wake();
    });
    this.socket.on('error', () => {});
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }

  write(data: string | Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (e) => (e ? reject(e) : resolve())));
  }

  /** The next response (they all carry Content-Length here); rejects if the connection closes first. */
  async response(): Promise<RawResponse> {
    for (;;) {
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end !== -1) {
        const head = this.#buffer.subarray(0, end).toString('latin1');
        const lines = head.split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (this.#buffer.length >= end + 4 + length) {
          const body = this.#buffer.subarray(end + 4, end + 4 + length).toString('utf8');
          this.#buffer = this.#buffer.subarray(end + 4 + length);
          return { status: Number(lines[0]!.split(' ')[1]), headers, body, head };
        }
      }
      if (this.#ended)
        throw new Error(`connection closed; received ${JSON.stringify(this.#buffer.toString('latin1'))}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Resolves once the server has closed the connection. */
  async closed(): Promise<void> {
    while (!this.#ended) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  close(): void {
    this.socket.destroy();
  }
}

/** An HTTP/1.1 request as bytes. */
export function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string | number>,
  body: string | Buffer = '',
): Buffer {
  const head = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), Buffer.from(body)]);
}
