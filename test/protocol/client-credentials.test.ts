/**
 * The scope of a client_credentials grant (RFC 6749 §4.4, §3.3; CC-01): what was asked for within
 * the client's ceiling, the default when nothing was asked for, never a user-only scope.
 */
import { describe, expect, it } from 'vitest';
import { clientCredentialsScope } from '../../src/protocol/client-credentials.js';

const CEILING = ['reports:read', 'reports:write', 'openid'];

describe('clientCredentialsScope (CC-01)', () => {
  it('grants the requested scopes within the ceiling, in order, once each', () => {
    expect(clientCredentialsScope(['reports:write', 'reports:read', 'reports:write'], CEILING, [])).toEqual([
      'reports:write',
      'reports:read',
    ]);
  });

  it('grants the defaults within the ceiling when none are requested', () => {
    expect(clientCredentialsScope([], CEILING, ['reports:read', 'admin', 'openid'])).toEqual([
      'reports:read',
    ]);
  });

  it('refuses an empty request without usable defaults: invalid_scope', () => {
    expect(() => clientCredentialsScope([], CEILING, ['admin'])).toThrow(
      expect.objectContaining({ code: 'invalid_scope' }),
    );
  });

  it('refuses a scope outside the ceiling, naming it, rather than dropping it', () => {
    expect(() => clientCredentialsScope(['reports:read', 'admin'], CEILING, [])).toThrow(
      expect.objectContaining({
        code: 'invalid_scope',
        description: "scope 'admin' is not allowed for this client",
      }),
    );
  });

  it.each(['openid', 'offline_access'])('refuses %s: there is no user', (scope) => {
    expect(() => clientCredentialsScope([scope], [...CEILING, 'offline_access'], [])).toThrow(
      expect.objectContaining({
        code: 'invalid_scope',
        description: expect.stringContaining('needs a user'),
      }),
    );
  });
});
