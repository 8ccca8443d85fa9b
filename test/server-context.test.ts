/**
 * The client cache of `ServerContext.getClient` (`clientCacheSeconds`): a registered client's record
 * is read from storage once per window, forgotten at once when this server changes it, never served
 * past its `expiresAt`, and a deletion made elsewhere is seen within the window.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Storage } from '../src/storage/types.js';
import { Harness, json } from './helpers/harness.js';
import { recordingStorage } from './helpers/recording-storage.js';

/** Storage that counts `clients.get` reads. */
function countingStorage(): { storage: Storage; reads: () => number } {
  const { storage, calls } = recordingStorage();
  return { storage, reads: () => calls.filter((name) => name === 'clients.get').length };
}

describe('client cache (clientCacheSeconds)', () => {
  let h: Harness;
  let counter: ReturnType<typeof countingStorage>;

  beforeEach(async () => {
    counter = countingStorage();
    h = await Harness.start({ storage: counter.storage });
  });
  afterEach(() => h.close());

  it('reads a client from storage once per 5-second window by default', async () => {
    const { client, body } = await h.tokens({ token_endpoint_auth_method: 'client_secret_post' });
    const token = body.access_token as string;
    await h.introspect(client, token);
    const before = counter.reads();
    for (let i = 0; i < 3; i++) expect(json(await h.introspect(client, token)).active).toBe(true);
    expect(counter.reads()).toBe(before);
    h.clock.advance(6);
    expect(json(await h.introspect(client, token)).active).toBe(true);
    expect(counter.reads()).toBe(before + 1);
  });

  it('forgets a client this server updated: the first code exchange clears its unused-client expiry', async () => {
    const client = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
    const { code, pkce } = await h.obtainCode(client);
    const exchanged = await h.exchange(client, code, pkce);
    expect((await counter.storage.clients.get(client.client_id, h.clock.now()))?.expiresAt).toBeUndefined();
    const before = counter.reads();
    // The copy cached before the exchange still carried `expiresAt`: it must have been dropped.
    await h.introspect(client, json(exchanged).access_token as string);
    expect(counter.reads()).toBe(before + 1);
    await h.introspect(client, json(exchanged).access_token as string);
    expect(counter.reads()).toBe(before + 1);
  });

  it('never serves a cached client past its expiresAt, even inside the cache window', async () => {
    // An unused registration expires 2 s after it is made: sooner than the 5-second cache window,
    // so only the cache's own expiry check can refuse it.
    const short = await Harness.start({
      storage: counter.storage,
      options: { registration: { unusedClientTtlSeconds: 2 } },
    });
    try {
      const client = await short.register({ token_endpoint_auth_method: 'client_secret_post' });
      const refresh = () =>
        short.token({
          grant_type: 'refresh_token',
          refresh_token: 'x',
          client_id: client.client_id,
          client_secret: client.client_secret,
        });
      // Within its lifetime the client authenticates (the refresh token is what fails), and is cached.
      expect(json(await refresh()).error).toBe('invalid_grant');
      const reads = counter.reads();
      short.clock.advance(3);
      const refused = await refresh();
      expect(json(refused).error).toBe('invalid_client');
      // Refused because the cached copy had expired, then confirmed from storage.
      expect(counter.reads()).toBe(reads + 1);
    } finally {
      await short.close();
    }
  });

  it('sees a client deleted directly in storage once the window has passed', async () => {
    const { client, body } = await h.tokens({ token_endpoint_auth_method: 'client_secret_post' });
    await counter.storage.clients.delete(client.client_id, h.clock.now());
    h.clock.advance(5);
    expect((await h.introspect(client, body.access_token as string)).status).toBe(401);
  });

  it('remembers an unknown client_id for the window too; a failed authentication still reads storage once, whatever the id (bench/timing.mjs)', async () => {
    const { client } = await h.tokens({ token_endpoint_auth_method: 'client_secret_post' });
    const unknown = { ...client, client_id: `${client.client_id.slice(0, -4)}zzzz` };
    const wrong = { ...client, client_secret: 'not-the-secret' };
    const probe = (who: typeof client) => h.introspect(who, 'not-a-token');
    await probe(client);
    await probe(unknown);
    const before = counter.reads();
    for (let i = 0; i < 3; i++) expect((await probe(client)).status).toBe(200);
    // The known client is answered from the cache inside the window.
    expect(counter.reads()).toBe(before);
    // A failure reads storage once, for a remembered unknown id as for a cached client with a
    // wrong secret: timing cannot tell an active client's id from an unknown one.
    expect((await probe(unknown)).status).toBe(401);
    expect(counter.reads()).toBe(before + 1);
    expect((await probe(wrong)).status).toBe(401);
    expect(counter.reads()).toBe(before + 2);
  });

  it('reads storage on every request with clientCacheSeconds: 0', async () => {
    const uncached = await Harness.start({ storage: counter.storage, options: { clientCacheSeconds: 0 } });
    try {
      const { client, body } = await uncached.tokens({ token_endpoint_auth_method: 'client_secret_post' });
      const before = counter.reads();
      await uncached.introspect(client, body.access_token as string);
      await uncached.introspect(client, body.access_token as string);
      expect(counter.reads()).toBe(before + 2);
    } finally {
      await uncached.close();
    }
  });
});
