/**
 * ABU-02: the address every per-address limit counts under. IPv6 clients are keyed by their /64
 * (configurable with `ipv6PrefixLength`), whatever `clientIp` returns, so one site cannot multiply
 * its buckets; and a server with rate limits that receives requests without an address (a Fetch
 * handler given no `remoteAddress`) says so once instead of silently counting nothing.
 */
import { describe, expect, it } from 'vitest';
import { createFetchHandler } from '../../src/adapters/fetch.js';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory.js';
import { createAuthorizationServer } from '../../src/server.js';
import { memoryStorage } from '../../src/storage/memory.js';
import { CB, ISSUER } from '../helpers/harness.js';
import { recordingLogger } from '../helpers/recording-logger.js';

const ONE_REGISTRATION = { register: { points: 1, durationSeconds: 3600 } };

async function serverWith(options: { ipv6PrefixLength?: number } = {}) {
  const logger = recordingLogger();
  const oauth = await createAuthorizationServer({
    issuer: ISSUER,
    storage: memoryStorage(),
    rateLimiter: createMemoryRateLimiter({ limits: ONE_REGISTRATION }),
    logger,
    ...options,
  });
  const register = async (remoteAddress: string | undefined) =>
    (
      await oauth.handle({
        method: 'POST',
        url: '/oauth/register',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [CB] }),
        remoteAddress,
      })
    )?.status;
  return { oauth, logger, register };
}

describe('ABU-02 IPv6 clients are keyed by prefix', () => {
  it('two addresses in one /64 share a bucket; an address in another /64 has its own', async () => {
    const { oauth, register } = await serverWith();
    expect(await register('2001:db8:1:2::1')).toBe(201);
    expect(await register('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(429);
    expect(await register('2001:db8:1:3::1')).toBe(201);
    // IPv4 addresses stay keys of their own, and an IPv4-mapped address is its IPv4 address.
    expect(await register('192.0.2.1')).toBe(201);
    expect(await register('::ffff:192.0.2.1')).toBe(429);
    expect(await register('192.0.2.2')).toBe(201);
    await oauth.close();
  });

  it('ipv6PrefixLength widens or narrows the key', async () => {
    const wide = await serverWith({ ipv6PrefixLength: 48 });
    expect(await wide.register('2001:db8:1:2::1')).toBe(201);
    expect(await wide.register('2001:db8:1:3::1')).toBe(429);
    await wide.oauth.close();
    const exact = await serverWith({ ipv6PrefixLength: 128 });
    expect(await exact.register('2001:db8:1:2::1')).toBe(201);
    expect(await exact.register('2001:db8:1:2::2')).toBe(201);
    await exact.oauth.close();
  });

  it('refuses an ipv6PrefixLength outside 1..128 at start', async () => {
    for (const ipv6PrefixLength of [0, 129, 64.5]) {
      await expect(
        createAuthorizationServer({ issuer: ISSUER, storage: memoryStorage(), ipv6PrefixLength }),
      ).rejects.toThrow(/ipv6PrefixLength/);
    }
  });

  it("keeps a key the host's own resolver made", async () => {
    const keys: string[] = [];
    const oauth = await createAuthorizationServer({
      issuer: ISSUER,
      storage: memoryStorage(),
      rateLimiter: {
        async consume(_bucket, key) {
          keys.push(key);
          return { allowed: true };
        },
      },
      clientIp: () => '2001:db8::/56',
    });
    await oauth.handle({ method: 'POST', url: '/oauth/revoke', headers: {}, remoteAddress: '2001:db8::1' });
    expect(keys).toEqual(['2001:db8::/56']);
    await oauth.close();
  });
});

describe('ABU-02 a Fetch handler without a client address', () => {
  const request = () =>
    new Request(`${ISSUER}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [CB] }),
    });
  const addressWarnings = (logger: ReturnType<typeof recordingLogger>) =>
    logger.lines.filter((line) => line.level === 'warn' && line.fields?.option === 'clientIp');

  it('warns once when rate limits are configured and no address source is given', async () => {
    const { oauth, logger } = await serverWith();
    const handler = createFetchHandler(oauth);
    for (let i = 0; i < 3; i++) await handler(request());
    expect(addressWarnings(logger)).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/remoteAddress to createFetchHandler/) }),
    ]);
    await oauth.close();
  });

  it('says nothing when the platform address is passed, and limits by it', async () => {
    const { oauth, logger } = await serverWith();
    const handler = createFetchHandler(oauth, { remoteAddress: () => '2001:db8:5:6::7' });
    expect((await handler(request())).status).toBe(201);
    expect((await handler(request())).status).toBe(429);
    expect(addressWarnings(logger)).toEqual([]);
    await oauth.close();
  });

  it('says nothing without rate limits', async () => {
    const logger = recordingLogger();
    const oauth = await createAuthorizationServer({ issuer: ISSUER, storage: memoryStorage(), logger });
    await createFetchHandler(oauth)(request());
    expect(addressWarnings(logger)).toEqual([]);
    await oauth.close();
  });
});
