/**
 * CIMD-09 and ATK-41: valid documents are cached per Cache-Control within the server's bounds;
 * errors and invalid documents never are.
 */
import { describe, expect, it } from 'vitest';
import { cacheLifetimeSeconds } from '../../src/cimd/cache.js';
import { createClientIdMetadataResolver } from '../../src/cimd/resolver.js';
import { CLIENT_ID, scriptedFetcher, validDocument } from '../helpers/metadata-documents.js';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (seconds: number) => (now += seconds * 1000) };
}

function setup(
  cache: {
    defaultTtlSeconds?: number;
    minTtlSeconds?: number;
    maxTtlSeconds?: number;
    maxEntries?: number;
  } = {},
) {
  const script = scriptedFetcher();
  const time = clock();
  const resolve = createClientIdMetadataResolver({ fetcher: script.fetcher, clock: time.now, cache });
  return { script, time, resolve };
}

const bounds = { defaultTtlSeconds: 300, minTtlSeconds: 60, maxTtlSeconds: 3600 };

describe('CIMD-09 Cache-Control lifetimes', () => {
  it.each([
    [undefined, 300],
    ['public', 300],
    ['max-age=600', 600],
    ['public, max-age="600"', 600],
    ['Max-Age=600', 600],
    ['max-age=10', 60],
    ['max-age=86400', 3600],
    ['max-age=0', 0],
    ['no-store', 0],
    ['max-age=600, no-store', 0],
    ['no-cache', 0],
    ['no-cache="set-cookie", max-age=600', 0],
    ['max-age=abc', 0],
    ['max-age=-1', 0],
    ['max-age=600, max-age=60', 0],
  ])('Cache-Control %s → %i s', (header, seconds) => {
    expect(cacheLifetimeSeconds(header, bounds)).toBe(seconds);
  });
});

describe('CIMD-09 caching valid documents', () => {
  it('serves a document from the cache for max-age, then fetches again', async () => {
    const { script, time, resolve } = setup();
    script.serve(CLIENT_ID, { body: validDocument(), cacheControl: 'max-age=600' });
    await resolve(CLIENT_ID);
    time.advance(599);
    await resolve(CLIENT_ID);
    expect(script.fetches).toHaveLength(1);
    time.advance(1);
    await resolve(CLIENT_ID);
    expect(script.fetches).toHaveLength(2);
  });

  it('lowers a long max-age to maxTtlSeconds, so a changed document is seen', async () => {
    const { script, time, resolve } = setup({ maxTtlSeconds: 120 });
    script.serve(CLIENT_ID, { body: validDocument(), cacheControl: 'max-age=31536000' });
    await resolve(CLIENT_ID);
    script.serve(CLIENT_ID, {
      body: validDocument(CLIENT_ID, { client_name: 'Renamed' }),
      cacheControl: 'max-age=31536000',
    });
    time.advance(119);
    expect((await resolve(CLIENT_ID))?.metadata.client_name).toBe('Example Agent');
    time.advance(1);
    expect((await resolve(CLIENT_ID))?.metadata.client_name).toBe('Renamed');
  });

  it('raises a short max-age to minTtlSeconds', async () => {
    const { script, time, resolve } = setup({ minTtlSeconds: 30 });
    script.serve(CLIENT_ID, { body: validDocument(), cacheControl: 'max-age=1' });
    await resolve(CLIENT_ID);
    time.advance(29);
    await resolve(CLIENT_ID);
    expect(script.fetches).toHaveLength(1);
  });

  it.each(['no-store', 'no-cache', 'max-age=0'])('fetches every time under %s', async (header) => {
    const { script, resolve } = setup();
    script.serve(CLIENT_ID, { body: validDocument(), cacheControl: header });
    await resolve(CLIENT_ID);
    await resolve(CLIENT_ID);
    expect(script.fetches).toHaveLength(2);
  });

  it('uses the default lifetime without Cache-Control', async () => {
    const { script, time, resolve } = setup({ defaultTtlSeconds: 100 });
    script.serve(CLIENT_ID, { body: validDocument() });
    await resolve(CLIENT_ID);
    time.advance(99);
    await resolve(CLIENT_ID);
    expect(script.fetches).toHaveLength(1);
    time.advance(1);
    await resolve(CLIENT_ID);
    expect(script.fetches).toHaveLength(2);
  });

  it('keeps at most maxEntries documents, evicting the least recently used', async () => {
    const { script, resolve } = setup({ maxEntries: 2 });
    const ids = ['a', 'b', 'c'].map((n) => `https://client.example/${n}.json`);
    for (const id of ids) script.serve(id, { body: validDocument(id), cacheControl: 'max-age=600' });
    await resolve(ids[0]!);
    await resolve(ids[1]!);
    await resolve(ids[0]!); // a is now more recent than b
    await resolve(ids[2]!); // evicts b
    expect(script.fetches).toEqual([ids[0], ids[1], ids[2]]);
    await resolve(ids[0]!);
    expect(script.fetches).toHaveLength(3);
    await resolve(ids[1]!);
    expect(script.fetches).toHaveLength(4);
  });

  it('caches nothing with maxEntries 0', async () => {
    const { script, resolve } = setup({ maxEntries: 0 });
    script.serve(CLIENT_ID, { body: validDocument(), cacheControl: 'max-age=600' });
    await resolve(CLIENT_ID);
    await resolve(CLIENT_ID);
    expect(script.fetches).toHaveLength(2);
  });

  it('fetches once for concurrent requests of one client_id', async () => {
    const { script, resolve } = setup();
    script.serve(CLIENT_ID, { body: validDocument(), cacheControl: 'no-store' });
    const clients = await Promise.all(Array.from({ length: 20 }, () => resolve(CLIENT_ID)));
    expect(script.fetches).toHaveLength(1);
    expect(new Set(clients.map((c) => c?.clientId))).toEqual(new Set([CLIENT_ID]));
    await resolve(CLIENT_ID);
    expect(script.fetches).toHaveLength(2);
  });
});

describe('CIMD-09 / ATK-41 errors are never cached as documents, only remembered briefly (ABU-04)', () => {
  it('retries after a fixed mismatching client_id once the failure expires, even when the bad response said max-age', async () => {
    const { script, time, resolve } = setup();
    script.serve(CLIENT_ID, { body: validDocument(`${CLIENT_ID}/`), cacheControl: 'max-age=3600' });
    await expect(resolve(CLIENT_ID)).rejects.toMatchObject({ problem: 'invalid_document' });
    script.serve(CLIENT_ID, { body: validDocument(), cacheControl: 'max-age=3600' });
    // Within failureCacheSeconds (30 s) the failure is answered from memory, without a fetch.
    time.advance(29);
    await expect(resolve(CLIENT_ID)).rejects.toMatchObject({ problem: 'invalid_document' });
    expect(script.fetches).toHaveLength(1);
    time.advance(1);
    await expect(resolve(CLIENT_ID)).resolves.toMatchObject({ clientId: CLIENT_ID });
    expect(script.fetches).toHaveLength(2);
  });

  it('retries after a document that declared client_secret_post is fixed', async () => {
    const { script, time, resolve } = setup();
    script.serve(CLIENT_ID, {
      body: validDocument(CLIENT_ID, { token_endpoint_auth_method: 'client_secret_post' }),
    });
    await expect(resolve(CLIENT_ID)).rejects.toMatchObject({ problem: 'invalid_document' });
    script.serve(CLIENT_ID, { body: validDocument() });
    time.advance(30);
    await expect(resolve(CLIENT_ID)).resolves.toMatchObject({ clientId: CLIENT_ID });
  });

  it('retries after an HTTP error status', async () => {
    const { script, time, resolve } = setup();
    script.serve(CLIENT_ID, { status: 503, cacheControl: 'max-age=3600', body: '' });
    await expect(resolve(CLIENT_ID)).rejects.toMatchObject({ problem: 'bad_status' });
    script.serve(CLIENT_ID, { body: validDocument() });
    time.advance(30);
    await expect(resolve(CLIENT_ID)).resolves.toMatchObject({ clientId: CLIENT_ID });
  });

  it('retries after a fetcher failure, and reports unknown failures without their message', async () => {
    let fail = true;
    const time = clock();
    const script = scriptedFetcher();
    script.serve(CLIENT_ID, { body: validDocument() });
    const resolve = createClientIdMetadataResolver({
      clock: time.now,
      fetcher: async (request) => {
        if (fail) throw new Error('internal detail: 10.0.0.7 refused');
        return script.fetcher(request);
      },
    });
    const error = await resolve(CLIENT_ID).catch((e: unknown) => e);
    expect(error).toMatchObject({ problem: 'fetch_failed', reason: 'the document could not be fetched' });
    expect(String((error as Error).message)).not.toContain('10.0.0.7');
    fail = false;
    time.advance(30);
    await expect(resolve(CLIENT_ID)).resolves.toMatchObject({ clientId: CLIENT_ID });
  });

  it('does not keep a failed in-flight request for later callers', async () => {
    const { script, time, resolve } = setup();
    script.serve(CLIENT_ID, { body: '{' });
    const results = await Promise.allSettled([resolve(CLIENT_ID), resolve(CLIENT_ID)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(script.fetches).toHaveLength(1);
    script.serve(CLIENT_ID, { body: validDocument() });
    time.advance(30);
    await expect(resolve(CLIENT_ID)).resolves.toMatchObject({ clientId: CLIENT_ID });
  });

  it('remembers nothing with failureCacheSeconds: 0 (a fixed document works at once)', async () => {
    const script = scriptedFetcher();
    const resolve = createClientIdMetadataResolver({ fetcher: script.fetcher, failureCacheSeconds: 0 });
    script.serve(CLIENT_ID, { status: 404, body: '' });
    await expect(resolve(CLIENT_ID)).rejects.toMatchObject({ problem: 'bad_status' });
    script.serve(CLIENT_ID, { body: validDocument() });
    await expect(resolve(CLIENT_ID)).resolves.toMatchObject({ clientId: CLIENT_ID });
  });

  it('refuses a body above maxBytes even when a custom fetcher returns it', async () => {
    const { script, resolve } = setup();
    script.serve(CLIENT_ID, { body: validDocument(CLIENT_ID, { padding: 'x'.repeat(6000) }) });
    await expect(resolve(CLIENT_ID)).rejects.toMatchObject({ problem: 'too_large' });
  });
});
