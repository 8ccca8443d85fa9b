/**
 * Stateless DPoP server nonces (RFC 9449 §8, §9, §11.1; DPOP-03): any instance with the shared
 * secret checks any instance's nonce; a nonce lives one to two windows; forgeries fail.
 */
import { describe, expect, it } from 'vitest';
import { createDpopNonceSource } from '../../src/protocol/dpop-nonce.js';

const SECRET = 'a shared secret of at least 32 bytes!!';
const START = Date.parse('2030-01-01T00:00:00Z'); // a multiple of 300 s

function setup(secret: string | Uint8Array = SECRET, windowSeconds?: number) {
  let now = START;
  const nonces = createDpopNonceSource({
    secret,
    clock: () => now,
    ...(windowSeconds === undefined ? {} : { windowSeconds }),
  });
  return { nonces, advance: (seconds: number) => (now += seconds * 1000) };
}

describe('createDpopNonceSource', () => {
  it('issues one nonce per window, in the NQCHAR set (RFC 9449 §8.1)', async () => {
    const { nonces, advance } = setup();
    const first = await nonces.current();
    expect(first).toMatch(/^[\x21\x23-\x5b\x5d-\x7e]+$/);
    advance(299);
    expect(await nonces.current()).toBe(first);
    advance(1);
    expect(await nonces.current()).not.toBe(first);
  });

  it('accepts a nonce in its window and the next one, and not after', async () => {
    const { nonces, advance } = setup();
    const nonce = await nonces.current();
    expect(await nonces.check(nonce)).toBe(true);
    advance(599);
    expect(await nonces.check(nonce)).toBe(true);
    advance(1);
    expect(await nonces.check(nonce)).toBe(false);
  });

  it('refuses a nonce from the future', async () => {
    const { nonces, advance } = setup();
    advance(300);
    const future = await nonces.current();
    const { nonces: behind } = setup();
    expect(await behind.check(future)).toBe(false);
  });

  it('accepts nonces of another instance with the same secret, and none made with another secret', async () => {
    const a = setup().nonces;
    const b = setup().nonces;
    const other = setup('another secret of at least 32 bytes!!!').nonces;
    expect(await b.check(await a.current())).toBe(true);
    expect(await other.check(await a.current())).toBe(false);
  });

  it.each([
    ['an empty string', ''],
    ['garbage', 'not-a-nonce'],
    ['a forged MAC', 'x.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['a MAC of the wrong length', 'x.AAAA'],
  ])('refuses %s', async (_label, nonce) => {
    expect(await setup().nonces.check(nonce)).toBe(false);
  });

  it('refuses a second spelling of a valid nonce (leading zero in the window)', async () => {
    const { nonces } = setup();
    const nonce = await nonces.current();
    expect(await nonces.check(`0${nonce}`)).toBe(false);
  });

  it('refuses a secret shorter than 32 bytes and a window that is not a positive integer', () => {
    expect(() => createDpopNonceSource({ secret: 'short' })).toThrow(TypeError);
    expect(() => createDpopNonceSource({ secret: new Uint8Array(31) })).toThrow(TypeError);
    expect(() => createDpopNonceSource({ secret: SECRET, windowSeconds: 0 })).toThrow(TypeError);
    expect(() => createDpopNonceSource({ secret: SECRET, windowSeconds: 1.5 })).toThrow(TypeError);
  });

  it('uses the configured window', async () => {
    const { nonces, advance } = setup(SECRET, 60);
    const nonce = await nonces.current();
    advance(120);
    expect(await nonces.check(nonce)).toBe(false);
  });
});
