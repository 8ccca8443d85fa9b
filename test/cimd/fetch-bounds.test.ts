/**
 * ABU-04: inbound junk naming metadata documents cannot turn the server into a relay. A failure is
 * remembered briefly per URL and, when nothing answered, per host; a global cap bounds concurrent
 * fetches and a budget bounds fetches per host and minute; documents that were valid before are
 * exempt from the host's budget and failures; descriptions sent to callers reveal no network
 * detail (which ports answer, which names resolve), which goes to the log instead.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ClientMetadataDocumentError } from '../../src/cimd/errors.js';
import type { MetadataFetcher, MetadataFetchRequest } from '../../src/cimd/fetcher.js';
import { createClientIdMetadataResolver } from '../../src/cimd/resolver.js';
import type { Logger } from '../../src/core/context.js';
import { OAuthError } from '../../src/core/errors.js';
import { CB, Harness, json } from '../helpers/harness.js';
import { scriptedFetcher, validDocument } from '../helpers/metadata-documents.js';

const UNREACHABLE = 'https://unreachable.example/oauth/client.json';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (seconds: number) => (now += seconds * 1000) };
}

/** A fetcher that counts its calls and how many run at once, failing like a closed port. */
function countingFetcher(
  answer: (request: MetadataFetchRequest) => Promise<never> | ReturnType<MetadataFetcher> = async () => {
    throw new ClientMetadataDocumentError('fetch_failed', 'the connection was refused');
  },
) {
  const stats = { calls: 0, running: 0, maxRunning: 0 };
  const fetcher: MetadataFetcher = async (request) => {
    stats.calls++;
    stats.running++;
    stats.maxRunning = Math.max(stats.maxRunning, stats.running);
    try {
      return await answer(request);
    } finally {
      stats.running--;
    }
  };
  return { fetcher, stats };
}

/** A promise released by hand: holds fetches open to observe concurrency. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

function recordingLogger() {
  const lines: { level: string; message: string; fields: Record<string, unknown> | undefined }[] = [];
  const log =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, message, fields });
    };
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
  return { logger, lines };
}

describe('ABU-04 a failure is remembered briefly, per URL and per host', () => {
  it('300 junk requests naming one unreachable document cause one fetch, concurrent or not', async () => {
    const time = clock();
    const { fetcher, stats } = countingFetcher();
    const resolve = createClientIdMetadataResolver({ fetcher, clock: time.now });
    const concurrent = await Promise.allSettled(Array.from({ length: 150 }, () => resolve(UNREACHABLE)));
    expect(concurrent.every((r) => r.status === 'rejected')).toBe(true);
    for (let i = 0; i < 150; i++) await resolve(UNREACHABLE).catch(() => undefined);
    expect(stats.calls).toBe(1);
    // After failureCacheSeconds (30 s) the document is tried again, once.
    time.advance(30);
    for (let i = 0; i < 10; i++) await resolve(UNREACHABLE).catch(() => undefined);
    expect(stats.calls).toBe(2);
  });

  it('300 junk requests naming different documents of one unreachable host stay within the cap, then cost nothing', async () => {
    const time = clock();
    const hold = gate();
    const { fetcher, stats } = countingFetcher(async () => {
      await hold.opened;
      throw new ClientMetadataDocumentError('timeout', 'the connection was not established within 2000 ms');
    });
    const resolve = createClientIdMetadataResolver({ fetcher, clock: time.now });
    const url = (i: number) => `https://unreachable.example/clients/${i}.json`;
    const first = Array.from({ length: 150 }, (_, i) => resolve(url(i)));
    hold.open();
    const results = await Promise.allSettled(first);
    expect(stats.maxRunning).toBeLessThanOrEqual(10);
    expect(stats.calls).toBeLessThanOrEqual(10);
    const busy = results.filter(
      (r) => r.status === 'rejected' && (r.reason as OAuthError).code === 'temporarily_unavailable',
    );
    expect(busy.length).toBeGreaterThanOrEqual(140);
    // The host failed: every other document of it is refused from memory, without a fetch.
    const calls = stats.calls;
    for (let i = 150; i < 300; i++) {
      const error = await resolve(url(i)).catch((e: unknown) => e);
      expect(error).toMatchObject({ problem: 'timeout' });
    }
    expect(stats.calls).toBe(calls);
  });
});

describe('ABU-04 a global cap on concurrent fetches', () => {
  it('never runs more than maxConcurrentFetches at once; the rest get 503 with Retry-After, not a cached failure', async () => {
    const hold = gate();
    const script = scriptedFetcher();
    const { fetcher, stats } = countingFetcher(async (request) => {
      await hold.opened;
      return script.fetcher(request);
    });
    const resolve = createClientIdMetadataResolver({ fetcher, maxConcurrentFetches: 4 });
    const ids = Array.from({ length: 20 }, (_, i) => `https://host${i}.example/client.json`);
    for (const id of ids) script.serve(id, { body: validDocument(id) });
    const pending = ids.map((id) => resolve(id));
    hold.open();
    const results = await Promise.allSettled(pending);
    expect(stats.maxRunning).toBe(4);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(4);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(OAuthError);
    expect(refused.reason).toMatchObject({ code: 'temporarily_unavailable', status: 503 });
    expect(Number((refused.reason as OAuthError).headers['retry-after'])).toBeGreaterThan(0);
    // Being turned away is not the document's fault: the next try fetches it.
    await expect(resolve(ids[19]!)).resolves.toMatchObject({ clientId: ids[19] });
  });
});

describe('ABU-04 a budget of fetches per host and minute', () => {
  it('refuses the 31st fetch from one host within a minute with 503; a document valid before is still refreshed', async () => {
    const time = clock();
    const script = scriptedFetcher();
    const resolve = createClientIdMetadataResolver({ fetcher: script.fetcher, clock: time.now });
    const real = 'https://apps.example/real/client.json';
    script.serve(real, { body: validDocument(real), cacheControl: 'max-age=60' });
    await resolve(real);
    // A stranger names 40 junk documents of the same host (each answers 404).
    const outcomes: string[] = [];
    for (let i = 0; i < 40; i++) {
      const error = (await resolve(`https://apps.example/junk/${i}.json`).catch(
        (e: unknown) => e,
      )) as OAuthError;
      outcomes.push(error.code);
    }
    // The real client's own fetch used one unit of the budget: 29 junk fetches, then 503s.
    expect(outcomes.filter((c) => c === 'invalid_client')).toHaveLength(29);
    expect(outcomes.filter((c) => c === 'temporarily_unavailable')).toHaveLength(11);
    expect(script.fetches).toHaveLength(30);
    // The real document's cache ends inside the same minute: it is fetched despite the budget.
    time.advance(59);
    expect(script.fetches).toHaveLength(30);
    time.advance(1);
    await expect(resolve(real)).resolves.toMatchObject({ clientId: real });
    expect(script.fetches).toHaveLength(31);
    // A new window: junk is fetched again.
    time.advance(60);
    await resolve('https://apps.example/junk/new.json').catch(() => undefined);
    expect(script.fetches).toHaveLength(32);
  });
});

describe('ABU-04 descriptions reveal no network detail; the log has it', () => {
  it.each([
    ['a closed port', new ClientMetadataDocumentError('fetch_failed', 'the connection was refused')],
    [
      'a silent host',
      new ClientMetadataDocumentError('timeout', 'the document was not received within 5000 ms'),
    ],
    [
      'a name that does not resolve',
      new ClientMetadataDocumentError('fetch_failed', 'the host name could not be resolved'),
    ],
    [
      'a name resolving to a private address',
      new ClientMetadataDocumentError('forbidden_address', 'the host resolves to a private-use address'),
    ],
  ])('%s gets the same generic description', async (_name, failure) => {
    const { logger, lines } = recordingLogger();
    const resolve = createClientIdMetadataResolver({
      logger,
      fetcher: async () => {
        throw failure;
      },
    });
    const error = (await resolve(UNREACHABLE).catch((e: unknown) => e)) as ClientMetadataDocumentError;
    expect(error.description).toBe(
      "the client's metadata document could not be used: the document could not be fetched",
    );
    expect(error.toJSON().error_description).not.toContain(failure.reason);
    // The detail is logged once, at warn for a special-use address (someone may probe the network).
    expect(lines).toEqual([
      {
        level: failure.problem === 'forbidden_address' ? 'warn' : 'info',
        message: 'client metadata document refused',
        fields: { problem: failure.problem, reason: failure.reason, host: 'unreachable.example' },
      },
    ]);
    // Remembered failures are answered without a second log line.
    await resolve(UNREACHABLE).catch(() => undefined);
    expect(lines).toHaveLength(1);
  });

  it('a response the host sent is still described (status), and an IP literal refused from the string alone too', async () => {
    const script = scriptedFetcher();
    const resolve = createClientIdMetadataResolver({ fetcher: script.fetcher });
    const status = (await resolve(UNREACHABLE).catch((e: unknown) => e)) as ClientMetadataDocumentError;
    expect(status.description).toContain('HTTP 404');
    const literal = (await resolve('https://10.0.0.1/client.json').catch(
      (e: unknown) => e,
    )) as ClientMetadataDocumentError;
    expect(literal.problem).toBe('forbidden_address');
    expect(literal.description).toContain('the client_id host is a private-use');
  });
});

describe('ABU-04 through the server', () => {
  let h: Harness | undefined;
  afterEach(() => h?.close());

  it('300 junk token requests naming one unreachable document cost one outbound fetch and answer 400 invalid_client', async () => {
    const { fetcher, stats } = countingFetcher();
    h = await Harness.start({ options: { clientIdMetadataDocuments: { enabled: true, fetcher } } });
    const statuses = new Set<number>();
    const descriptions = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const response = await h.token({
        grant_type: 'authorization_code',
        code: `junk-${i}`,
        redirect_uri: CB,
        client_id: UNREACHABLE,
        code_verifier: 'v'.repeat(43),
      });
      statuses.add(response.status);
      descriptions.add(String(json(response).error_description));
    }
    expect(stats.calls).toBe(1);
    expect([...statuses]).toEqual([400]);
    expect([...descriptions]).toEqual([
      "the client's metadata document could not be used: the document could not be fetched",
    ]);
  });
});
