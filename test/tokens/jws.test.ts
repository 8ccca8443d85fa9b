/**
 * The JWS signer picks `node:crypto` only where the runtime's implementation signs correctly, and
 * Web Crypto elsewhere; either way the compact JWS verifies with jose (RFC 7515 §7.1, RFC 7518 §3).
 * The refusing `node:crypto` below behaves like workerd's (Workers with `nodejs_compat`), which
 * throws `ERR_INVALID_ARG_TYPE` for a `KeyObject` passed with `dsaEncoding`.
 */
import * as nodeCrypto from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { createJwsSigner, type NodeCryptoForSigning, signJwt } from '../../src/tokens/jws.js';

const PAYLOAD = { iss: 'https://auth.example.com', sub: 'ada', aud: 'https://api.example.com', exp: 2e9 };

async function keyPair(alg: 'ES256' | 'RS256') {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, modulusLength: 2048 });
  const jwk = (await exportJWK(privateKey)) as Record<string, unknown>;
  return { jwk, privateKey, publicKey };
}

/** Signs a token with `sign` and verifies it with jose against the public key. */
async function expectVerifies(alg: 'ES256' | 'RS256', sign: Parameters<typeof signJwt>[0]['sign']) {
  const { publicKey } = await keyPairCache(alg);
  // Encoded headers are cached by kid: one kid per algorithm, as thumbprints would be.
  const kid = `kid-${alg}`;
  const token = await signJwt({ alg, kid, sign }, 'at+jwt', PAYLOAD);
  const { payload, protectedHeader } = await jwtVerify(token, publicKey);
  expect(protectedHeader).toEqual({ alg, kid, typ: 'at+jwt' });
  expect(payload).toEqual(PAYLOAD);
}

const pairs = new Map<string, Awaited<ReturnType<typeof keyPair>>>();
async function keyPairCache(alg: 'ES256' | 'RS256') {
  let pair = pairs.get(alg);
  if (pair === undefined) {
    pair = await keyPair(alg);
    pairs.set(alg, pair);
  }
  return pair;
}

/** A `node:crypto` like workerd's: `sign` refuses `{ key: KeyObject, dsaEncoding }`. */
const refusesKeyObjectWithEncoding: NodeCryptoForSigning = {
  createPrivateKey: (input) => nodeCrypto.createPrivateKey(input as nodeCrypto.JsonWebKeyInput),
  sign: (algorithm, data, key) => {
    if (typeof key === 'object' && key !== null && 'dsaEncoding' in key && 'key' in key) {
      if (key.key instanceof nodeCrypto.KeyObject) {
        throw new TypeError(
          'The "options.key" property must be of type string or an instance of ArrayBuffer, Buffer, TypedArray, DataView, or Object. Received an instance of PrivateKeyObject',
        );
      }
    }
    return nodeCrypto.sign(algorithm, data, key as nodeCrypto.KeyLike);
  },
};

/** A `node:crypto` that ignores `dsaEncoding` and returns DER signatures. */
const ignoresEncoding: NodeCryptoForSigning = {
  createPrivateKey: (input) => nodeCrypto.createPrivateKey(input as nodeCrypto.JsonWebKeyInput),
  sign: (algorithm, data, key) => {
    const keyObject = (key as { key?: nodeCrypto.KeyObject }).key ?? (key as nodeCrypto.KeyObject);
    return nodeCrypto.sign(algorithm, data, keyObject);
  },
};

describe('JWS signer (RFC 7515 §7.1)', () => {
  for (const alg of ['ES256', 'RS256'] as const) {
    it(`${alg}: signs with node:crypto on Node, and the token verifies (RFC 7518 §3)`, async () => {
      const { jwk, privateKey, publicKey } = await keyPairCache(alg);
      const choice = await createJwsSigner(alg, jwk, { privateKey, publicKey });
      expect(choice).toEqual({ sign: expect.any(Function), via: 'node:crypto' });
      // Synchronous: the fast path adds no promise hop per token.
      expect(choice.sign(new TextEncoder().encode('x'))).toBeInstanceOf(Uint8Array);
      await expectVerifies(alg, choice.sign);
    });

    it(`${alg}: signs with Web Crypto on a runtime without node:crypto, and the token verifies`, async () => {
      const { jwk, privateKey, publicKey } = await keyPairCache(alg);
      const choice = await createJwsSigner(alg, jwk, { privateKey, publicKey }, null);
      expect(choice).toEqual({ sign: expect.any(Function), via: 'web-crypto' });
      await expectVerifies(alg, choice.sign);
    });
  }

  it('ES256: falls back to Web Crypto where node:crypto refuses a KeyObject with dsaEncoding (workerd nodejs_compat)', async () => {
    const { jwk, privateKey, publicKey } = await keyPairCache('ES256');
    const choice = await createJwsSigner(
      'ES256',
      jwk,
      { privateKey, publicKey },
      refusesKeyObjectWithEncoding,
    );
    expect(choice.via).toBe('web-crypto');
    expect(choice.refused).toMatch(/^TypeError: The "options.key" property/);
    await expectVerifies('ES256', choice.sign);
  });

  it('RS256: keeps node:crypto on that runtime, where RSA needs no dsaEncoding', async () => {
    const { jwk, privateKey, publicKey } = await keyPairCache('RS256');
    const choice = await createJwsSigner(
      'RS256',
      jwk,
      { privateKey, publicKey },
      refusesKeyObjectWithEncoding,
    );
    expect(choice.via).toBe('node:crypto');
    await expectVerifies('RS256', choice.sign);
  });

  it('ES256: falls back to Web Crypto where node:crypto returns DER instead of r || s (RFC 7518 §3.4)', async () => {
    const { jwk, privateKey, publicKey } = await keyPairCache('ES256');
    const choice = await createJwsSigner('ES256', jwk, { privateKey, publicKey }, ignoresEncoding);
    expect(choice.via).toBe('web-crypto');
    expect(choice.refused).toMatch(/does not verify with Web Crypto/);
    await expectVerifies('ES256', choice.sign);
  });

  it('falls back to Web Crypto where node:crypto cannot import the JWK', async () => {
    const { jwk, privateKey, publicKey } = await keyPairCache('ES256');
    const cannotImport: NodeCryptoForSigning = {
      createPrivateKey: () => {
        throw new Error('Unsupported key format');
      },
      sign: nodeCrypto.sign as NodeCryptoForSigning['sign'],
    };
    const choice = await createJwsSigner('ES256', jwk, { privateKey, publicKey }, cannotImport);
    expect(choice).toMatchObject({ via: 'web-crypto', refused: 'Error: Unsupported key format' });
    await expectVerifies('ES256', choice.sign);
  });

  it('a node:crypto signer for another key pair than the Web Crypto one is refused', async () => {
    const { jwk } = await keyPairCache('ES256');
    const other = await keyPair('ES256');
    const otherPublic = (await importJWK(
      { ...(await exportJWK(other.publicKey)), alg: 'ES256' } as JWK,
      'ES256',
    )) as CryptoKey;
    const choice = await createJwsSigner('ES256', jwk, {
      privateKey: other.privateKey,
      publicKey: otherPublic,
    });
    expect(choice.via).toBe('web-crypto');
  });
});
