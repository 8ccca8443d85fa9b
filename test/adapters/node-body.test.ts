/**
 * How the node:http adapter reads request bodies: whole when the body came with the headers, by
 * events when it trickles in, never past the limit, and without disturbing keep-alive.
 */
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toOAuthRequest } from '../../src/adapters/node.js';

const LIMIT = 64;

let server: Server;
let port = 0;
/** Requests that emitted 'end' and then 'close', as a stream read to its end does. */
let ended = 0;

beforeAll(async () => {
  // Echoes what the adapter read: the body as text, or 413 when it refused it.
  server = createServer(async (req, res) => {
    let sawEnd = false;
    req.once('end', () => {
      sawEnd = true;
    });
    req.once('close', () => {
      if (sawEnd) ended++;
    });
    const request = await toOAuthRequest(req, LIMIT);
    if (request === null) {
      res.writeHead(413, { connection: 'close', 'content-length': 0 }).end();
      return;
    }
    const body =
      request.body === undefined
        ? null
        : typeof request.body === 'string'
          ? request.body
          : Buffer.from(request.body).toString('utf8');
    const json = JSON.stringify({ body });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
    res.end(json);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A raw connection: writes exactly the bytes given, reads whole responses off it. */
class RawConnection {
  readonly #socket: Socket;
  #buffer = '';
  #waiters: Array<() => void> = [];

  constructor() {
    this.#socket = connect(port, '127.0.0.1');
    this.#socket.setEncoding('latin1');
    this.#socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  write(data: string | Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => this.#socket.write(data, (e) => (e ? reject(e) : resolve())));
  }

  /** The next response: status and body (responses here always carry Content-Length). */
  async response(): Promise<{ status: number; body: string }> {
    for (;;) {
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end !== -1) {
        const head = this.#buffer.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (this.#buffer.length >= end + 4 + length) {
          const body = this.#buffer.slice(end + 4, end + 4 + length);
          this.#buffer = this.#buffer.slice(end + 4 + length);
          return { status: Number(head.split(' ')[1]), body };
        }
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  close(): void {
    this.#socket.destroy();
  }
}

const post = (body: string, headers = `Content-Length: ${Buffer.byteLength(body)}\r\n`) =>
  `POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n${headers}\r\n${body}`;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('toOAuthRequest: request bodies over node:http', () => {
  it('reads a form body sent in the same write as the headers', async () => {
    const c = new RawConnection();
    await c.write(post('grant_type=refresh_token&refresh_token=abc'));
    expect(await c.response()).toEqual({
      status: 200,
      body: JSON.stringify({ body: 'grant_type=refresh_token&refresh_token=abc' }),
    });
    c.close();
  });

  it('reads a body that arrives after the headers, in several pieces', async () => {
    const c = new RawConnection();
    const body = 'grant_type=authorization_code&code=xyz&code_verifier=v';
    const whole = post(body);
    const headersEnd = whole.indexOf('\r\n\r\n') + 4;
    await c.write(whole.slice(0, headersEnd));
    await pause(30);
    await c.write(body.slice(0, 10));
    await pause(30);
    await c.write(body.slice(10));
    expect(await c.response()).toEqual({ status: 200, body: JSON.stringify({ body }) });
    c.close();
  });

  it('reads multi-byte UTF-8 split across writes without corrupting it', async () => {
    const c = new RawConnection();
    const body = 'client_name=Ada%20%E2%9C%93&x=é';
    const bytes = Buffer.from(post(body), 'utf8');
    const split = bytes.length - 1; // inside the two bytes of the final "é"
    await c.write(bytes.subarray(0, split));
    await pause(20);
    await c.write(bytes.subarray(split));
    const answer = await c.response();
    expect(answer.status).toBe(200);
    expect(JSON.parse(Buffer.from(answer.body, 'latin1').toString('utf8'))).toEqual({ body });
    c.close();
  });

  it('answers several posts in turn on one keep-alive connection', async () => {
    const c = new RawConnection();
    for (const body of ['a=1', 'b=22', 'c=333']) {
      await c.write(post(body));
      expect(await c.response()).toEqual({ status: 200, body: JSON.stringify({ body }) });
    }
    // Two requests in one write (pipelining) are each read with their own body.
    await c.write(post('first=1') + post('second=2'));
    expect(await c.response()).toEqual({ status: 200, body: JSON.stringify({ body: 'first=1' }) });
    expect(await c.response()).toEqual({ status: 200, body: JSON.stringify({ body: 'second=2' }) });
    c.close();
  });

  it("still ends and closes each request stream after taking its body, for listeners of 'close'", async () => {
    const before = ended;
    const c = new RawConnection();
    for (const body of ['a=1', 'b=2', 'c=3']) {
      await c.write(post(body));
      expect((await c.response()).status).toBe(200);
    }
    for (let i = 0; i < 50 && ended < before + 3; i++) await pause(10);
    expect(ended - before).toBe(3);
    c.close();
  });

  it('refuses a declared Content-Length over the limit without reading the body', async () => {
    const c = new RawConnection();
    await c.write(post('x'.repeat(LIMIT + 1)));
    expect((await c.response()).status).toBe(413);
    c.close();
  });

  it('refuses a chunked body once it grows past the limit', async () => {
    const c = new RawConnection();
    const chunk = 'y'.repeat(40);
    await c.write(post('', 'Transfer-Encoding: chunked\r\n'));
    await c.write(`${(40).toString(16)}\r\n${chunk}\r\n`);
    await pause(20);
    await c.write(`${(40).toString(16)}\r\n${chunk}\r\n0\r\n\r\n`);
    expect((await c.response()).status).toBe(413);
    c.close();
  });

  it('reads a chunked body under the limit', async () => {
    const c = new RawConnection();
    await c.write(post('', 'Transfer-Encoding: chunked\r\n'));
    await c.write('5\r\nhello\r\n');
    await pause(20);
    await c.write('6\r\n world\r\n0\r\n\r\n');
    expect(await c.response()).toEqual({ status: 200, body: JSON.stringify({ body: 'hello world' }) });
    c.close();
  });

  it('gives an empty body for a POST with Content-Length: 0', async () => {
    const c = new RawConnection();
    await c.write(post('', 'Content-Length: 0\r\n'));
    expect(await c.response()).toEqual({ status: 200, body: JSON.stringify({ body: '' }) });
    c.close();
  });
});
