/**
 * The reference server's environment: a value it refuses stops the start with one line naming the
 * variable (README, "Configuration"), and `PORT` is a port number written in decimal digits, never
 * a coercion that turns an empty value into a random port.
 */
import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../../examples/course-school/src/config.js';

/** The message `configFromEnv` refuses `source` with. */
function refusal(source: Record<string, string>): string {
  try {
    configFromEnv(source);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(source)}`);
}

describe('course-school environment', () => {
  it('PORT: decimal digits from 0 to 65535; 3000 when unset', () => {
    expect(configFromEnv({}).port).toBe(3000);
    expect(configFromEnv({ PORT: '0' }).port).toBe(0);
    expect(configFromEnv({ PORT: '8080' }).port).toBe(8080);
    expect(configFromEnv({ PORT: '65535' }).port).toBe(65_535);
  });

  it('PORT: empty, signed, fractional, exponent, hexadecimal, padded or past 65535 is refused (an empty value is not a random port)', () => {
    for (const port of [
      '',
      ' ',
      '-1',
      '+80',
      '80.5',
      '1e3',
      '0x50',
      ' 80',
      '80 ',
      '65536',
      '99999',
      '123456',
      'abc',
    ]) {
      expect(refusal({ PORT: port }), JSON.stringify(port)).toBe(
        'invalid environment: PORT: must be a port number, 0 to 65535',
      );
    }
  });

  it('every refusal is one line that names the variable', () => {
    const cases: [Record<string, string>, string][] = [
      [{ PORT: 'http' }, 'PORT'],
      [{ STORAGE: 'redis' }, 'STORAGE'],
      [{ ISSUER: 'https://school.example/' }, 'ISSUER'],
      [{ DATABASE_URL: 'mysql://db/school' }, 'DATABASE_URL'],
      [{ PGLITE_IMPORT_DIR: './old', STORAGE: 'pglite' }, 'PGLITE_IMPORT_DIR'],
      [{ SESSION_SECRET: 'short' }, 'SESSION_SECRET'],
      [{ RATE_LIMIT: 'no' }, 'RATE_LIMIT'],
      [{ TIME_IN_TOKENS: 'false' }, 'TIME_IN_TOKENS'],
    ];
    for (const [source, variable] of cases) {
      const message = refusal(source);
      expect(message, variable).not.toContain('\n');
      expect(message, variable).toMatch(new RegExp(`^invalid environment: ${variable}: `));
    }
  });
});
