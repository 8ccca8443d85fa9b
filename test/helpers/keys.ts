/**
 * Signing keys made once per test file. Generating an RSA key dominates a harness's start-up, so
 * tests whose subject is not key management pass these as `options.keys` instead.
 */
import { exportJWK, generateKeyPair } from 'jose';
import type { KeyOptions } from '../../src/options.js';

async function generate(): Promise<KeyOptions> {
  const rsa = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  const ec = await generateKeyPair('ES256', { extractable: true });
  return {
    privateJwks: [
      { ...(await exportJWK(rsa.privateKey)), alg: 'RS256', kid: 'test-rs256' },
      { ...(await exportJWK(ec.privateKey)), alg: 'ES256', kid: 'test-es256' },
    ],
  };
}

/** `options.keys` for a harness: one RS256 and one ES256 key, shared by the whole test file. */
export const TEST_KEYS: KeyOptions = await generate();
