/**
 * The one error type (RFC 6749 §5.2; RFC 6750 §3.1; RFC 7591 §3.2.2) and the conversion of
 * anything thrown into it.
 */
import { describe, expect, it } from 'vitest';
import { isOAuthError, OAuthError, type OAuthErrorCode, toOAuthError } from '../../src/core/errors.js';

/** RFC 6749 §5.2: error_description is limited to %x20-21 / %x23-5B / %x5D-7E. */
const DESCRIPTION_CHARSET = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

describe('OAuthError', () => {
  it.each([
    ['invalid_request', 400],
    ['invalid_client', 400],
    ['invalid_grant', 400],
    ['unauthorized_client', 400],
    ['unsupported_grant_type', 400],
    ['invalid_scope', 400],
    ['access_denied', 403],
    ['unsupported_response_type', 400],
    ['server_error', 500],
    ['temporarily_unavailable', 503],
    ['invalid_token', 401],
    ['insufficient_scope', 403],
    ['unsupported_token_type', 400],
    ['invalid_redirect_uri', 400],
    ['invalid_client_metadata', 400],
    ['invalid_target', 400],
    ['login_required', 400],
    ['too_many_requests', 429],
    ['not_found', 404],
    ['method_not_allowed', 405],
  ] as const)('%s defaults to HTTP %i', (code: OAuthErrorCode, status: number) => {
    expect(new OAuthError(code).status).toBe(status);
  });

  it('keeps an explicit status and its headers', () => {
    const error = new OAuthError('invalid_client', 'bad credentials', {
      status: 401,
      headers: { 'www-authenticate': 'Basic realm="x"' },
    });
    expect(error.status).toBe(401);
    expect(error.headers).toEqual({ 'www-authenticate': 'Basic realm="x"' });
    expect(new OAuthError('invalid_client').headers).toEqual({});
  });

  it('serialises to the RFC 6749 §5.2 body, without error_description when there is none', () => {
    expect(new OAuthError('invalid_scope', 'unknown scope').toJSON()).toEqual({
      error: 'invalid_scope',
      error_description: 'unknown scope',
    });
    expect(new OAuthError('invalid_grant').toJSON()).toEqual({ error: 'invalid_grant' });
    expect(JSON.parse(JSON.stringify(new OAuthError('invalid_grant')))).toEqual({ error: 'invalid_grant' });
  });

  it('cleans the description to the RFC 6749 §5.2 charset: quotes, backslashes, controls and non-ASCII', () => {
    const error = new OAuthError('invalid_request', 'say "hi"\\now\r\nTAB\there: \u00e9\u202e\u0000 <b>&');
    expect(error.description).toBe("say 'hi'/now??TAB?here: ??? <b>&");
    expect(error.description).toMatch(DESCRIPTION_CHARSET);
    expect(error.message).toBe(error.description);
  });

  it('keeps every allowed character verbatim', () => {
    let allowed = '';
    for (let c = 0x20; c <= 0x7e; c++) if (c !== 0x22 && c !== 0x5c) allowed += String.fromCharCode(c);
    expect(new OAuthError('invalid_request', allowed).description).toBe(allowed);
  });

  it('caps a description that quotes long client input', () => {
    const description = new OAuthError('invalid_request', `scope ${'x'.repeat(10_000)}`).description!;
    expect(description.length).toBeLessThanOrEqual(300);
    expect(description.startsWith('scope xxx')).toBe(true);
  });

  it('is an Error named OAuthError that keeps its cause', () => {
    const cause = new Error('inner');
    const error = new OAuthError('server_error', 'failed', { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('OAuthError');
    expect(error.cause).toBe(cause);
  });
});

describe('isOAuthError', () => {
  it('recognises OAuthErrors, including ones from another copy of the library', () => {
    expect(isOAuthError(new OAuthError('invalid_request'))).toBe(true);
    const foreign = Object.assign(new Error('x'), { name: 'OAuthError', code: 'invalid_grant', status: 400 });
    expect(isOAuthError(foreign)).toBe(true);
  });

  it('rejects everything else', () => {
    expect(isOAuthError(new Error('invalid_request'))).toBe(false);
    expect(isOAuthError({ name: 'OAuthError', code: 'invalid_request' })).toBe(false);
    expect(isOAuthError(Object.assign(new Error('x'), { name: 'OAuthError' }))).toBe(false);
    expect(isOAuthError('invalid_request')).toBe(false);
    expect(isOAuthError(null)).toBe(false);
    expect(isOAuthError(undefined)).toBe(false);
  });
});

describe('toOAuthError', () => {
  it('returns an OAuthError unchanged', () => {
    const error = new OAuthError('invalid_scope', 'x');
    expect(toOAuthError(error)).toBe(error);
  });

  it.each([
    ['an Error', new Error('connect ECONNREFUSED 10.0.0.5:5432 (password=hunter2)')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'hunter2')")],
    ['a thrown string', 'hunter2'],
    ['undefined', undefined],
  ])('turns %s into server_error 500 without revealing its message', (_label, thrown) => {
    const error = toOAuthError(thrown);
    expect(error.code).toBe('server_error');
    expect(error.status).toBe(500);
    expect(JSON.stringify(error.toJSON())).not.toMatch(/hunter2|ECONNREFUSED|10\.0\.0\.5/);
    expect(error.message).not.toMatch(/hunter2/);
    expect(error.cause).toBe(thrown);
  });
});
