/**
 * Option validation: `createAuthorizationServer` refuses bad options synchronously with an
 * `InvalidOptionsError` that names each bad option.
 */
import { describe, expect, it } from 'vitest';
import type { AuthorizationServerOptions } from '../src/options.js';
import { InvalidOptionsError, validateOptions } from '../src/options-schema.js';
import { createAuthorizationServer } from '../src/server.js';
import { memoryStorage } from '../src/storage/memory.js';

/** The InvalidOptionsError `createAuthorizationServer` throws for `options`. */
function problemsOf(options: Record<string, unknown>): InvalidOptionsError {
  try {
    createAuthorizationServer(options as unknown as AuthorizationServerOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionsError);
    return error as InvalidOptionsError;
  }
  throw new Error('expected createAuthorizationServer to throw');
}

const base = () => ({ issuer: 'https://auth.example.com', storage: memoryStorage() });

describe('createAuthorizationServer option validation', () => {
  it('accepts minimal valid options, https and loopback http issuers (validated without starting a server)', () => {
    for (const issuer of [
      'https://auth.example.com',
      'https://auth.example.com/tenant',
      'https://auth.example.com:8443',
      'http://127.0.0.1:3000',
      'http://localhost:3000',
      'http://[::1]:3000',
    ]) {
      expect(() => validateOptions({ ...base(), issuer }), issuer).not.toThrow();
    }
  });

  it.each([
    ['a trailing slash', 'https://auth.example.com/'],
    ['a trailing slash after a path', 'https://auth.example.com/tenant/'],
    ['a query', 'https://auth.example.com?tenant=1'],
    ['a fragment', 'https://auth.example.com#x'],
    ['http on a public host', 'http://auth.example.com'],
    ['http on a name that embeds a loopback address', 'http://127.0.0.1.nip.io:3000'],
    ['another scheme', 'ftp://auth.example.com'],
    ['a relative URL', '/auth'],
    ['no scheme', 'auth.example.com'],
    ['user info', 'https://admin:secret@auth.example.com'],
    ['an upper-case host', 'https://Auth.Example.com'],
    ['an upper-case scheme', 'HTTPS://auth.example.com'],
    ['the default port written out', 'https://auth.example.com:443'],
    ['a dot segment', 'https://auth.example.com/a/../tenant'],
    ['an IPv4 shorthand', 'http://127.1:3000'],
    ['a hexadecimal IPv4 host', 'http://0x7f.0.0.1:3000'],
  ])('refuses an issuer with %s, naming options.issuer (RFC 8414 §2)', (_label, issuer) => {
    const error = problemsOf({ ...base(), issuer });
    expect(
      error.problems.some((p) => p.startsWith('options.issuer: ')),
      error.message,
    ).toBe(true);
  });

  it('names the normal form of an issuer written otherwise, since every endpoint URL is built from it (MD-01, MD-02)', () => {
    const error = problemsOf({ ...base(), issuer: 'https://Auth.Example.com:443/Tenant' });
    expect(error.problems.find((p) => p.startsWith('options.issuer: '))).toMatch(
      /https:\/\/auth\.example\.com\/Tenant$/,
    );
  });

  it('refuses a missing issuer and a missing storage', () => {
    const error = problemsOf({});
    expect(error.problems.some((p) => p.startsWith('options.issuer: '))).toBe(true);
    expect(error.problems.some((p) => p.startsWith('options.storage: '))).toBe(true);
  });

  it('refuses an unknown option, naming it (a typo must not silently keep a default)', () => {
    const error = problemsOf({ ...base(), clientSecretBsic: true });
    expect(error.problems.join('\n')).toContain('clientSecretBsic');
  });

  it('refuses a storage that does not implement the Storage interface', () => {
    const { rotateRefreshToken: _dropped, ...grants } = memoryStorage().grants;
    const incomplete = { ...memoryStorage(), grants };
    for (const storage of [{}, incomplete, null]) {
      const error = problemsOf({ ...base(), storage });
      expect(error.problems.some((p) => p.startsWith('options.storage: '))).toBe(true);
    }
  });

  it.each([
    [
      'a negative access token lifetime',
      { accessTokenTtlSeconds: -1 },
      'options.tokens.accessTokenTtlSeconds: ',
    ],
    [
      'a zero refresh token lifetime',
      { refreshTokenIdleTtlSeconds: 0 },
      'options.tokens.refreshTokenIdleTtlSeconds: ',
    ],
    ['a fractional lifetime', { idTokenTtlSeconds: 1.5 }, 'options.tokens.idTokenTtlSeconds: '],
    ['a code lifetime over 600 s', { codeTtlSeconds: 601 }, 'options.tokens.codeTtlSeconds: '],
    ['a refresh grace over 60 s', { refreshGraceSeconds: 61 }, 'options.tokens.refreshGraceSeconds: '],
  ])('refuses %s, naming the option', (_label, tokens, prefix) => {
    const error = problemsOf({ ...base(), tokens });
    expect(
      error.problems.some((p) => p.startsWith(prefix)),
      error.message,
    ).toBe(true);
  });

  it('caps the code lifetime at 10 minutes (RFC 6749 §4.1.2) and accepts exactly 600 s', () => {
    const error = problemsOf({ ...base(), tokens: { codeTtlSeconds: 601 } });
    expect(error.problems).toContain('options.tokens.codeTtlSeconds: must be at most 600 (RFC 6749 §4.1.2)');
    expect(() => validateOptions({ ...base(), tokens: { codeTtlSeconds: 600 } })).not.toThrow();
  });

  it('names every problem at once, each on its own line of the message', () => {
    const error = problemsOf({
      issuer: 'http://auth.example.com/',
      storage: {},
      tokens: { codeTtlSeconds: 3600 },
      maxBodyBytes: 10,
      loginUrl: 'javascript:alert(1)',
    });
    for (const option of ['issuer', 'storage', 'tokens.codeTtlSeconds', 'maxBodyBytes', 'loginUrl']) {
      expect(
        error.problems.some((p) => p.startsWith(`options.${option}: `)),
        option,
      ).toBe(true);
      expect(error.message).toContain(`options.${option}: `);
    }
  });

  it('throws synchronously an InvalidOptionsError that is a TypeError', () => {
    const error = problemsOf({ ...base(), issuer: 'https://auth.example.com/' });
    expect(error).toBeInstanceOf(TypeError);
    expect(error.name).toBe('InvalidOptionsError');
  });
});
