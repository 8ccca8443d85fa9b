/**
 * Password hashing with scrypt (node:crypto), a memory-hard function, and constant-time
 * verification. The stored string names its parameters, so they can be raised later without
 * invalidating existing hashes.
 * @module
 */
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import type { DataStore, UserRecord } from '../data/store.js';

/**
 * N=2^15, r=8, p=1: 32 MiB and about 130 ms per hash here, above the scrypt paper's interactive-login
 * setting (2^14) and below OWASP's 2^17, which costs half a second on a shared two-core machine. A
 * deployment raises N; stored hashes keep their own parameters.
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFKC'),
      salt,
      KEY_LENGTH,
      { ...options, maxmem: 256 * 1024 * 1024 },
      (e, key) => (e === null ? resolve(key) : reject(e)),
    );
  });
}

/** Hashes a password: `scrypt$N$r$p$<salt b64url>$<key b64url>`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

/** True when `password` matches `stored`; compares the derived keys in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || key === undefined) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;

/**
 * Spends the time of one verification without a user, so a login with an unknown email takes as
 * long as one with a wrong password (no account enumeration by timing).
 */
export async function verifyNothing(password: string): Promise<false> {
  dummy ??= hashPassword('not a password of anyone');
  await verifyPassword(password, await dummy);
  return false;
}

/**
 * The user whose email and password these are, or null. An unknown email costs one verification
 * too, so the answer's timing does not tell whether an account exists.
 *
 * @param email - lower-cased
 */
export async function verifyLogin(
  data: DataStore,
  email: string,
  password: string,
): Promise<UserRecord | null> {
  const user = await data.getUserByEmail(email);
  if (user === null) return verifyNothing(password).then(() => null);
  return (await verifyPassword(password, user.passwordHash)) ? user : null;
}
