/**
 * The plain response helpers every handler and adapter shares: error responses (RFC 6749 §5.2),
 * 405 and 413, and the header readers.
 */
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/core/errors.js';
import {
  errorResponse,
  mediaType,
  methodNotAllowed,
  type OAuthRequest,
  payloadTooLarge,
  singleCredentialHeader,
  splitUrl,
} from '../../src/core/http.js';

function withHeaders(headers: Record<string, string>): OAuthRequest {
  return { method: 'POST', url: '/', headers };
}

describe('errorResponse', () => {
  it('answers an OAuthError with its status, a no-store JSON body and its headers (RFC 6749 §5.1, §5.2)', () => {
    const response = errorResponse(
      new OAuthError('invalid_token', 'the token expired', {
        headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
      }),
    );
    expect(response.status).toBe(401);
    expect(response.headers).toEqual({
      'content-type': 'application/json',
      'cache-control': 'no-store',
      pragma: 'no-cache',
      'www-authenticate': 'Bearer error="invalid_token"',
    });
    expect(JSON.parse(response.body!)).toEqual({
      error: 'invalid_token',
      error_description: 'the token expired',
    });
  });

  it('keeps Retry-After of a rate-limit error', () => {
    const response = errorResponse(
      new OAuthError('too_many_requests', 'slow down', { headers: { 'retry-after': '30' } }),
    );
    expect(response.status).toBe(429);
    expect(response.headers['retry-after']).toBe('30');
  });

  it('answers anything else with 500 server_error and never its message', () => {
    const response = errorResponse(new Error('SELECT * FROM clients failed: password=hunter2'));
    expect(response.status).toBe(500);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.headers['cache-control']).toBe('no-store');
    const body = JSON.parse(response.body!) as Record<string, unknown>;
    expect(body.error).toBe('server_error');
    expect(response.body).not.toMatch(/hunter2|SELECT/);
  });
});

describe('methodNotAllowed and payloadTooLarge', () => {
  it('methodNotAllowed is 405 method_not_allowed with an Allow header', () => {
    const response = errorResponse(methodNotAllowed(['GET', 'POST']));
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, POST');
    expect(JSON.parse(response.body!).error).toBe('method_not_allowed');
  });

  it('payloadTooLarge is 413 invalid_request in the OAuth JSON shape', () => {
    const response = payloadTooLarge();
    expect(response.status).toBe(413);
    expect(response.headers['content-type']).toBe('application/json');
    expect(JSON.parse(response.body!).error).toBe('invalid_request');
  });
});

describe('header and URL readers', () => {
  it('singleCredentialHeader returns one value and refuses a repeated one (RFC 6749 §2.3; ATK-32)', () => {
    expect(singleCredentialHeader(withHeaders({}), 'authorization')).toBeUndefined();
    expect(singleCredentialHeader(withHeaders({ authorization: 'Basic YTpi' }), 'authorization')).toBe(
      'Basic YTpi',
    );
    expect(() =>
      singleCredentialHeader(withHeaders({ authorization: 'Basic YTpi, Basic YzpkZA==' }), 'authorization'),
    ).toThrow(expect.objectContaining({ code: 'invalid_request', status: 400 }));
  });

  it('mediaType lower-cases the type and drops its parameters', () => {
    expect(mediaType(withHeaders({ 'content-type': 'Application/JSON ; charset=UTF-8' }))).toBe(
      'application/json',
    );
    expect(mediaType(withHeaders({}))).toBeUndefined();
  });

  it('splitUrl separates path and query and drops a fragment', () => {
    expect(splitUrl('/a/b?x=1&y=2#f')).toEqual({ path: '/a/b', query: 'x=1&y=2' });
    expect(splitUrl('/a#f?x=1')).toEqual({ path: '/a', query: '' });
    expect(splitUrl('/a')).toEqual({ path: '/a', query: '' });
  });
});
