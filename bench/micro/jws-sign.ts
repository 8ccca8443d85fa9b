/**
 * Micro-benchmark of JWS signing on the token hot path: CPU microseconds and wall-clock signatures
 * per second of `signJwt` with the signer `createJwsSigner` picks on this runtime, for ES256 (P-256)
 * and RS256 (RSA-2048), beside Web Crypto's signer for comparison. Not a test: run it before and
 * after a change to `src/tokens/jws.ts` and compare.
 *
 * Usage: `npx tsx bench/micro/jws-sign.ts [iterations]` (default 4000 ES256, a tenth for RS256).
 * @module
 */
import { exportJWK, generateKeyPair } from 'jose';
import { createJwsSigner, type JwsKey, signJwt } from '../../src/tokens/jws.js';

const iterations = Number(process.argv[2] ?? 4000);
const payload = {
  iss: 'https://auth.example.com',
  sub: 'ada',
  aud: 'https://api.example.com',
  client_id: 'abcdefghijklmnop',
  scope: 'openid profile notes:read',
  iat: 1_800_000_000,
  exp: 1_800_003_600,
  jti: 'Zm9vYmFyYmF6cXV4cXV1eA',
};

/** CPU µs per signature and signatures per second (wall clock) over `count` sequential signatures. */
async function measure(key: JwsKey, count: number): Promise<{ cpuMicros: number; perSecond: number }> {
  for (let i = 0; i < Math.ceil(count / 10); i++) await signJwt(key, 'at+jwt', payload);
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < count; i++) await signJwt(key, 'at+jwt', payload);
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { cpuMicros: (used.user + used.system) / count, perSecond: count / seconds };
}

/** The Web Crypto signer, as runtimes without `node:crypto` use it. */
function webCryptoSigner(alg: 'RS256' | 'ES256', privateKey: CryptoKey): JwsKey['sign'] {
  const params = alg === 'ES256' ? { name: 'ECDSA', hash: 'SHA-256' } : { name: 'RSASSA-PKCS1-v1_5' };
  return async (input) => new Uint8Array(await crypto.subtle.sign(params, privateKey, input));
}

const rows: string[] = [];
for (const alg of ['ES256', 'RS256'] as const) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, modulusLength: 2048 });
  const jwk = (await exportJWK(privateKey)) as Record<string, unknown>;
  const count = alg === 'ES256' ? iterations : Math.ceil(iterations / 10);
  const chosen = await createJwsSigner(alg, jwk, { privateKey, publicKey });
  for (const [name, sign] of [
    [`chosen: ${chosen.via}`, chosen.sign],
    ['Web Crypto', webCryptoSigner(alg, privateKey)],
  ] as const) {
    const result = await measure({ alg, kid: `kid-${alg}`, sign }, count);
    rows.push(
      `${alg}  ${name.padEnd(20)}  ${result.cpuMicros.toFixed(1).padStart(7)} µs CPU  ${Math.round(
        result.perSecond,
      )
        .toString()
        .padStart(7)} /s  (${count} signatures)`,
    );
  }
}
console.log(`Node ${process.version}, JWS signing (signJwt, one at a time)`);
for (const row of rows) console.log(row);
