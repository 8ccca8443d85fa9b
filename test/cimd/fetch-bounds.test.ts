/**
 * ABU-04: inbound junk naming metadata documents cannot turn the server into a relay. A failure is
 * remembered briefly per URL and, when nothing answered, per host; a global cap bounds concurrent
 * fetches, each client address gets a share of it and a budget per minute (random subdomains escape
 * the per-host budget, not this one), and a budget bounds fetches per host and minute; documents
 * that were valid before are exempt from the host's budget and failures; descriptions sent to
 * callers reveal no network detail (which ports answer, which names resolve), which goes to the
 * log instead. `jwks_uri` fetches are held to the same per-address bounds.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClientMetadataDocumentError } from '../../src/cimd/errors.js';
import type { MetadataFetcher, MetadataFetchRequest } from '../../src/cimd/fetcher.js';
import { createClientIdMetadataResolver } from '../../src/cimd/resolver.js';
import type { Logger } from '../../src/core/context.js';
import { OAuthError } from '../../src/core/errors.js';
import type { OAuthRequest } from '../../src/core/http.js';
import { asAssertion, clientAssertion } from '../helpers/client-assertion.js';
import { CB, Harness, ISSUER, json } from '../helpers/harness.js';
import { scriptedFetcher, validDocument } from '../helpers/metadata-documents.js';
import { testKey } from '../protocol/key-fixtures.js';

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

describe('ABU-04 a share of the slots and a budget per client address', () => {
  let h: Harness | undefined;
  afterEach(() => h?.close());
  const attacker = '2001:db8:66::/64';
  const junk = (i: number) => `https://r${i}.attacker.example/client.json`;

  it('one address naming 100 random subdomains holds at most 2 of the 10 slots (429 beyond); another address still gets its document fetched', async () => {
    const hold = gate();
    const script = scriptedFetcher();
    const real = 'https://apps.example/real/client.json';
    script.serve(real, { body: validDocument(real) });
    const { fetcher, stats } = countingFetcher(async (request) => {
      // The attacker's hosts answer slowly, holding their slots.
      if (request.target.host.endsWith('attacker.example')) await hold.opened;
      return script.fetcher(request);
    });
    const resolve = createClientIdMetadataResolver({ fetcher });
    const flood = Array.from({ length: 100 }, (_, i) => resolve(junk(i), attacker));
    expect(stats.running).toBe(2);
    await expect(resolve(real, '203.0.113.10')).resolves.toMatchObject({ clientId: real });
    hold.open();
    const results = await Promise.allSettled(flood);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as OAuthError] : []));
    const tooMany = refused.filter((e) => e.code === 'too_many_requests');
    expect(tooMany).toHaveLength(98);
    expect(tooMany[0]).toMatchObject({ status: 429 });
    expect(Number(tooMany[0]!.headers['retry-after'])).toBeGreaterThan(0);
    expect(tooMany[0]!.description).not.toContain('attacker.example');
    expect(stats.maxRunning).toBe(3);
  });

  it('one address starts at most 20 fetches a minute, then 429 until the minute ends; another address is not affected', async () => {
    const time = clock();
    const script = scriptedFetcher(); // every junk document answers 404
    const resolve = createClientIdMetadataResolver({ fetcher: script.fetcher, clock: time.now });
    const codes: string[] = [];
    for (let i = 0; i < 30; i++)
      codes.push(((await resolve(junk(i), attacker).catch((e: unknown) => e)) as OAuthError).code);
    expect(codes.slice(0, 20).every((c) => c === 'invalid_client')).toBe(true);
    expect(codes.slice(20).every((c) => c === 'too_many_requests')).toBe(true);
    expect(script.fetches).toHaveLength(20);
    time.advance(10);
    const later = (await resolve(junk(99), attacker).catch((e: unknown) => e)) as OAuthError;
    expect(later.headers['retry-after']).toBe('50');
    // Another address (another /64 of the same site counts apart only if the key says so).
    await resolve(junk(100), '2001:db8:77::/64').catch(() => undefined);
    expect(script.fetches).toHaveLength(21);
    time.advance(50);
    await resolve(junk(101), attacker).catch(() => undefined);
    expect(script.fetches).toHaveLength(22);
  });

  it('through the server: junk token requests from one address take 2 slots and get 429; another address’s client is resolved', async () => {
    const hold = gate();
    const script = scriptedFetcher();
    const real = 'https://apps.example/real/client.json';
    script.serve(real, { body: validDocument(real, { redirect_uris: [CB] }) });
    const { fetcher, stats } = countingFetcher(async (request) => {
      if (request.target.host.endsWith('attacker.example')) await hold.opened;
      return script.fetcher(request);
    });
    h = await Harness.start({
      options: {
        clientIdMetadataDocuments: { enabled: true, fetcher },
        clientIp: (request: OAuthRequest) => request.headers['x-test-address'],
      },
    });
    const junkToken = (clientId: string, address: string) =>
      h!.token(
        {
          grant_type: 'authorization_code',
          code: 'junk',
          redirect_uri: CB,
          client_id: clientId,
          code_verifier: 'v'.repeat(43),
        },
        { 'x-test-address': address },
      );
    const flood = Array.from({ length: 30 }, (_, i) => junkToken(junk(i), '2001:db8:66::1'));
    // The real client's user, from another address, while the flood's fetches hang.
    const realUser = await junkToken(real, '198.51.100.20');
    expect(json(realUser).error).toBe('invalid_grant'); // the client was resolved; the code is junk
    hold.open();
    const statuses = (await Promise.all(flood)).map((r) => r.status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(28);
    expect(stats.maxRunning).toBeLessThanOrEqual(3);
  });

  it('jwks_uri fetches: past its share an address is turned away unfetched, and that is not remembered as the client’s failure', async () => {
    const hold = gate();
    const script = scriptedFetcher();
    const key = await testKey('ES256', 'agent-1');
    const goodUri = 'https://agent.example/.well-known/jwks.json';
    script.serve(goodUri, { body: { keys: [key.publicJwk] } });
    const started: string[] = [];
    const fetcher: MetadataFetcher = async (request) => {
      started.push(request.target.clientId);
      if (request.target.host.endsWith('attacker.example')) await hold.opened;
      return script.fetcher(request);
    };
    h = await Harness.start({
      options: {
        clientIdMetadataDocuments: { fetcher },
        clientIp: (request: OAuthRequest) => request.headers['x-test-address'],
      },
    });
    const server = h;
    const register = (jwksUri: string) =>
      server.register({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: jwksUri });
    const slow = [
      await register('https://s1.attacker.example/jwks.json'),
      await register('https://s2.attacker.example/jwks.json'),
    ];
    const agent = await register(goodUri);
    const revoke = async (clientId: string, address: string) =>
      server.send({
        method: 'POST',
        url: '/api/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-test-address': address },
        body: new URLSearchParams({
          token: randomUUID(),
          ...asAssertion(await clientAssertion(key, clientId, { now: server.clock.now(), aud: ISSUER })),
        }).toString(),
      });
    // The attacker's address holds two slow key-set fetches, then names the agent.
    const held = slow.map((client) => revoke(client.client_id, '203.0.113.66'));
    await vi.waitFor(() => expect(started).toHaveLength(2));
    const turnedAway = await revoke(agent.client_id, '203.0.113.66');
    expect(turnedAway.status).toBe(400);
    expect(json(turnedAway).error).toBe('invalid_client');
    expect(started).not.toContain(goodUri);
    // The agent itself, from its own address, right after: its keys are fetched and verify.
    expect((await revoke(agent.client_id, '192.0.2.44')).status).toBe(200);
    expect(started).toContain(goodUri);
    hold.open();
    await Promise.all(held);
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
