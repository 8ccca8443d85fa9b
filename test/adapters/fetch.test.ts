/**
 * The Fetch entry: `toOAuthRequest` (headers, body limit, what happens to a refused body) and
 * `createFetchHandler` (the runtime's context reaching `remoteAddress` and `fallback`, a body a
 * middleware already read). Runtime-agnostic: plain `Request` objects, no sockets.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFetchHandler, toOAuthRequest } from '../../src/adapters/fetch.js';
import { DISCARD_LIMIT_BYTES, DISCARD_TIMEOUT_MS } from '../../src/adapters/fetch-messages.js';
import type { OAuthRequest } from '../../src/core/http.js';
import type { AuthorizationServer } from '../../src/server.js';
import { Harness, ISSUER } from '../helpers/harness.js';

const LIMIT = 64 * 1024;
const CHUNK = 64 * 1024;

/** A body of `total` bytes in 64 KiB chunks that records how much was pulled and whether it was cancelled. */
function meteredBody(total: number, options: { stallAfter?: number } = {}) {
  const meter = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (meter.pulled >= total) {
          controller.close();
          return;
        }
        if (options.stallAfter !== undefined && meter.pulled >= options.stallAfter) {
          await new Promise<void>(() => {}); // the client stops sending
        }
        const size = Math.min(CHUNK, total - meter.pulled);
        meter.pulled += size;
        controller.enqueue(new Uint8Array(size));
      },
      cancel() {
        meter.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, meter };
}

function post(body: ReadableStream<Uint8Array> | string, headers: Record<string, string> = {}): Request {
  return new Request(`${ISSUER}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
}

describe('toOAuthRequest', () => {
  it('keeps a repeated Authorization header visible, joined as the Fetch API joins it (RFC 6750 §2)', async () => {
    const request = new Request(`${ISSUER}/api/oauth/introspect?x=1`, {
      method: 'GET',
      headers: [
        ['authorization', 'Basic one'],
        ['authorization', 'Basic two'],
      ],
    });
    const translated = await toOAuthRequest(request, { maxBodyBytes: LIMIT, remoteAddress: '203.0.113.7' });
    expect(translated).toEqual({
      ok: true,
      request: {
        method: 'GET',
        url: '/api/oauth/introspect?x=1',
        headers: { authorization: 'Basic one, Basic two' },
        body: undefined,
        remoteAddress: '203.0.113.7',
      },
    });
  });

  it('reads a body up to the limit as bytes', async () => {
    const translated = await toOAuthRequest(post('{"client_name":"x"}'), { maxBodyBytes: LIMIT });
    expect(translated.ok && new TextDecoder().decode(translated.request.body as Uint8Array)).toBe(
      '{"client_name":"x"}',
    );
  });

  it('answers 413 to a body over the limit only after reading it to its end, so the client reads the 413 (ABU-07)', async () => {
    const { stream, meter } = meteredBody(8 * 1024 * 1024);
    const translated = await toOAuthRequest(post(stream), { maxBodyBytes: LIMIT });
    expect(translated.ok ? 200 : translated.response.status).toBe(413);
    expect(meter).toEqual({ pulled: 8 * 1024 * 1024, cancelled: false });
  });

  it(`stops discarding at ${DISCARD_LIMIT_BYTES / 1024 / 1024} MiB and cancels the rest of a larger body`, async () => {
    const { stream, meter } = meteredBody(64 * 1024 * 1024);
    const translated = await toOAuthRequest(post(stream), { maxBodyBytes: LIMIT });
    expect(translated.ok ? 200 : translated.response.status).toBe(413);
    expect(meter.cancelled).toBe(true);
    expect(meter.pulled).toBeLessThanOrEqual(DISCARD_LIMIT_BYTES + CHUNK);
  });

  it('reads nothing of a body whose declared length is beyond the discard limit', async () => {
    const { stream, meter } = meteredBody(64 * 1024 * 1024);
    const request = post(stream, { 'content-length': String(64 * 1024 * 1024) });
    const translated = await toOAuthRequest(request, { maxBodyBytes: LIMIT });
    expect(translated.ok ? 200 : translated.response.status).toBe(413);
    expect(meter).toEqual({ pulled: 0, cancelled: true });
  });

  it(`gives up on a refused body that stops arriving after ${DISCARD_TIMEOUT_MS / 1000} s`, async () => {
    vi.useFakeTimers();
    try {
      const { stream, meter } = meteredBody(8 * 1024 * 1024, { stallAfter: 2 * LIMIT });
      let status = 0;
      const done = toOAuthRequest(post(stream), { maxBodyBytes: LIMIT }).then((t) => {
        status = t.ok ? 200 : t.response.status;
      });
      await vi.advanceTimersByTimeAsync(DISCARD_TIMEOUT_MS - 1);
      expect(status).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      await done;
      expect(status).toBe(413);
      expect(meter.cancelled).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers 400 invalid_request, not 5xx, when the body stream fails', async () => {
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error('connection reset'));
      },
    });
    const translated = await toOAuthRequest(post(failing), { maxBodyBytes: LIMIT });
    expect(translated.ok).toBe(false);
    expect(
      translated.ok ? undefined : [translated.response.status, JSON.parse(translated.response.body!)],
    ).toEqual([400, { error: 'invalid_request', error_description: 'the request body could not be read' }]);
  });

  it('refuses a body that was already read: there is nothing left to parse', async () => {
    const request = post('{"redirect_uris":[]}');
    await request.text();
    const translated = await toOAuthRequest(request, { maxBodyBytes: LIMIT });
    expect(translated.ok ? 200 : translated.response.status).toBe(400);
  });
});

describe('createFetchHandler', () => {
  let h: Harness;
  const received: OAuthRequest[] = [];
  /** The started server, with its requests recorded on the way to the core. */
  let recording: AuthorizationServer;
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);

  beforeAll(async () => {
    h = await Harness.start();
    recording = {
      ...h.server,
      handle: (request) => {
        received.push(request);
        return h.server.handle(request);
      },
    };
    process.on('warning', onWarning);
  });
  afterEach(() => {
    warnings.length = 0;
  });
  afterAll(async () => {
    process.off('warning', onWarning);
    await h.close();
  });

  interface DenoInfo {
    remoteAddr: { hostname: string };
  }

  it("passes the runtime's context to remoteAddress (Deno's info.remoteAddr) and to fallback", async () => {
    const handler = createFetchHandler(recording, {
      remoteAddress: (_request, info: DenoInfo) => info.remoteAddr.hostname,
      fallback: (_request, info) => new Response(`not here, ${info.remoteAddr.hostname}`, { status: 404 }),
    });
    const info: DenoInfo = { remoteAddr: { hostname: '198.51.100.4' } };
    expect((await handler(new Request(`${ISSUER}/.well-known/jwks.json`), info)).status).toBe(200);
    expect(received.at(-1)?.remoteAddress).toBe('198.51.100.4');
    const other = await handler(new Request(`${ISSUER}/elsewhere`), info);
    expect([other.status, await other.text()]).toEqual([404, 'not here, 198.51.100.4']);
  });

  it('answers 400 to a body a middleware already read, and warns the operator once (PORTCULLIS_BODY_ALREADY_READ)', async () => {
    const handler = createFetchHandler(h.server);
    for (let i = 0; i < 2; i++) {
      const request = post(JSON.stringify({ redirect_uris: ['http://127.0.0.1:49152/cb'] }));
      await request.json();
      const response = await handler(request);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        error: 'invalid_request',
        error_description: expect.stringMatching(/before any body parser/),
      });
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.map((w) => (w as Error & { code?: string }).code)).toEqual([
      'PORTCULLIS_BODY_ALREADY_READ',
    ]);
  });
});
