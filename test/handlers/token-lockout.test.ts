/**
 * ATK-25 at the token endpoint: failed client authentications are counted per client, and once a
 * client is over the limit it is refused before its secret is checked, so a correct guess after the
 * threshold gets the same 429 as a wrong one (the limit is no oracle).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../../src/rate-limit/memory.js';
import { Harness, json } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(() => h?.close());

describe('token endpoint: client authentication lockout', () => {
  it('ATK-25 after 10 wrong secrets the right one is refused with 429 and Retry-After', async () => {
    h = await Harness.start({ options: { rateLimiter: createMemoryRateLimiter() } });
    const limiter = h;
    const conf = await limiter.register({ token_endpoint_auth_method: 'client_secret_post' });
    const { code, pkce: p } = await limiter.obtainCode(conf);
    const attempt = (secret: string) =>
      limiter.token({
        grant_type: 'authorization_code',
        code,
        redirect_uri: conf.redirect_uris[0],
        client_id: conf.client_id,
        client_secret: secret,
        code_verifier: p.verifier,
      });
    for (let i = 0; i < 10; i++) {
      const wrong = await attempt(`wrong-guess-${i}`);
      expect(wrong.status).toBe(400);
      expect(json(wrong).error).toBe('invalid_client');
    }
    const locked = await attempt(conf.client_secret!);
    expect(locked.status).toBe(429);
    expect(json(locked).error).toBe('too_many_requests');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    // Another client is not affected.
    const other = await limiter.register({ token_endpoint_auth_method: 'client_secret_post' });
    const otherCode = await limiter.obtainCode(other);
    expect((await limiter.exchange(other, otherCode.code, otherCode.pkce)).status).toBe(200);
  });
});
