/**
 * ATK-25: the token endpoint must not tell, by the time it takes, whether a `client_id` exists. The
 * unknown-client path does the same work as a wrong secret for a known client: one storage read,
 * one SHA-256 digest of the presented secret, one constant-time comparison of equal-length digests.
 * This test checks that the same steps run (deterministically, by recording them); measuring the
 * time belongs in the benchmark suite.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

const trace: string[] = [];

vi.mock('../../src/core/crypto.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/core/crypto.js')>();
  return {
    ...original,
    sha256: async (text: string) => {
      trace.push('sha256');
      return original.sha256(text);
    },
    timingSafeEqual: (a: string, b: string) => {
      trace.push(`timingSafeEqual(${a.length},${b.length})`);
      return original.timingSafeEqual(a, b);
    },
  };
});

const { resolveConfig } = await import('../../src/config.js');
const { parseOptions } = await import('../../src/options.js');
const { createServerContext } = await import('../../src/server-context.js');
const { authenticateClient } = await import('../../src/protocol/client-auth.js');
const { Params } = await import('../../src/core/params.js');
const { memoryStorage } = await import('../../src/storage/memory.js');
const { sha256 } = await import('../../src/core/crypto.js');
const { silentLogger } = await import('../../src/core/context.js');

async function context(options: { clientCacheSeconds?: number } = {}) {
  const storage = memoryStorage();
  const getClient = storage.clients.get.bind(storage.clients);
  (storage.clients as { get: typeof getClient }).get = async (clientId, now) => {
    trace.push('storage.getClient');
    return getClient(clientId, now);
  };
  await storage.clients.create({
    clientId: 'known-client',
    secretHash: await sha256('the-right-secret'),
    metadata: {
      redirect_uris: ['http://127.0.0.1/cb'],
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      application_type: 'native',
    },
    origin: 'dynamic',
    createdAt: 0,
  });
  // By default no client cache: every authentication reads storage, as a first request after start does.
  const config = await resolveConfig(
    parseOptions({
      issuer: 'http://127.0.0.1:4000',
      storage,
      clientCacheSeconds: options.clientCacheSeconds ?? 0,
      logger: silentLogger,
      clients: [
        {
          clientId: 'configured-client',
          clientSecret: 'a-configured-secret-of-32-chars!',
          redirectUris: ['http://127.0.0.1/cb'],
        },
      ],
    }),
  );
  return createServerContext(config, {} as never);
}

async function steps(ctx: Awaited<ReturnType<typeof context>>, clientId: string, secret: string) {
  trace.length = 0;
  const params = Params.parse(`client_id=${clientId}&client_secret=${secret}`);
  const outcome = await authenticateClient(
    ctx,
    { method: 'POST', url: '/token', headers: {}, remoteAddress: '203.0.113.1' },
    params,
  ).then(
    () => 'authenticated',
    (error: { code: string; status: number; description: string }) =>
      `${error.code} ${error.status} ${error.description}`,
  );
  return { outcome, trace: [...trace] };
}

describe('client authentication does the same work whether or not the client exists (ATK-25)', () => {
  let ctx: Awaited<ReturnType<typeof context>>;
  beforeEach(async () => {
    ctx = await context();
  });

  it('an unknown client_id and a wrong secret run the same steps and fail identically', async () => {
    const unknown = await steps(ctx, 'no-such-client', 'a-guess');
    const wrong = await steps(ctx, 'known-client', 'a-guess');
    expect(unknown).toEqual(wrong);
    expect(wrong).toEqual({
      outcome: 'invalid_client 400 client authentication failed',
      trace: ['storage.getClient', 'sha256', 'timingSafeEqual(43,43)'],
    });
  });

  it('the right secret runs those steps too', async () => {
    expect(await steps(ctx, 'known-client', 'the-right-secret')).toEqual({
      outcome: 'authenticated',
      trace: ['storage.getClient', 'sha256', 'timingSafeEqual(43,43)'],
    });
  });

  it('a request without a secret runs them as well, naming an unknown or a confidential client', async () => {
    const without = async (clientId: string) => {
      trace.length = 0;
      const params = Params.parse(`client_id=${clientId}`);
      const outcome = await authenticateClient(
        ctx,
        { method: 'POST', url: '/token', headers: {} },
        params,
      ).catch((error: { code: string }) => error.code);
      return { outcome, trace: [...trace] };
    };
    expect(await without('no-such-client')).toEqual(await without('known-client'));
    expect((await without('known-client')).trace).toEqual([
      'storage.getClient',
      'sha256',
      'timingSafeEqual(43,43)',
    ]);
  });
});

describe('with the client cache on, a failure still reads storage exactly once (ATK-25)', () => {
  it('an active (cached) client, a configured one, an id never seen and one already refused fail with the same steps', async () => {
    const ctx = await context({ clientCacheSeconds: 5 });
    expect((await steps(ctx, 'known-client', 'the-right-secret')).outcome).toBe('authenticated');
    await steps(ctx, 'refused-before', 'a-guess');
    // One at a time: the steps are recorded in one trace.
    const failures = [];
    failures.push(await steps(ctx, 'known-client', 'a-guess')); // cached since its success
    failures.push(await steps(ctx, 'configured-client', 'a-guess')); // from the options, never in storage
    failures.push(await steps(ctx, 'never-seen', 'a-guess'));
    failures.push(await steps(ctx, 'refused-before', 'a-guess')); // remembered as unknown
    for (const failure of failures) {
      expect(failure.outcome).toBe('invalid_client 400 client authentication failed');
      expect(failure.trace.filter((step) => step === 'storage.getClient')).toHaveLength(1);
    }
    // A success from the cache reads nothing.
    expect((await steps(ctx, 'known-client', 'the-right-secret')).trace).not.toContain('storage.getClient');
  });
});
