/**
 * The signing floor on the day: CPU microseconds per JWS signature with node:crypto, ES256
 * (P-256) and RS256 (RSA-2048), run on the server core. A token endpoint that signs an ID token
 * cannot go below these. Prints one JSON line: `{"es256": µs, "rs256": µs}`.
 * @module
 */
import { generateKeyPairSync, sign } from 'node:crypto';

const payload = Buffer.from(
  'eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJodHRwOi8vMTI3LjAuMC4xIiwic3ViIjoiYWRhIiwiYXVkIjoiY2xpZW50IiwiZXhwIjoxfQ',
);

/**
 * @param {import('node:crypto').KeyObject} key
 * @param {'ieee-p1363' | undefined} dsaEncoding
 * @param {number} iterations
 */
function microsPerSign(key, dsaEncoding, iterations) {
  const options = dsaEncoding === undefined ? { key } : { key, dsaEncoding };
  for (let i = 0; i < Math.ceil(iterations / 10); i++) sign('sha256', payload, options);
  const before = process.cpuUsage();
  for (let i = 0; i < iterations; i++) sign('sha256', payload, options);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / iterations;
}

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
console.log(
  JSON.stringify({
    es256: Math.round(microsPerSign(ec, 'ieee-p1363', 4000)),
    rs256: Math.round(microsPerSign(rsa, undefined, 400)),
  }),
);
