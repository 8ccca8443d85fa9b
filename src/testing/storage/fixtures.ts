/**
 * Valid records with random ids, for the kit's tests and for adapter authors' own.
 * @module
 */
import { base64url } from '../../core/crypto.js';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ClientRecord,
  GrantRecord,
  PendingAuthorizationRecord,
  RefreshTokenRecord,
  SigningKeyRecord,
} from '../../storage/types.js';

/** The kit's clock: every test runs at this epoch second (2027-01-15) or relative to it. */
export const NOW = 1_800_000_000;

/** A random id with a readable prefix. */
export function randomId(prefix: string): string {
  return `${prefix}-${base64url(crypto.getRandomValues(new Uint8Array(12)))}`;
}

/** A random base64url SHA-256-sized digest. */
export function randomHash(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Fixture builders, exported for adapter authors writing extra tests. Each returns a valid record
 * with random ids; pass overrides for the fields a test is about.
 *
 * @example
 * ```ts
 * import { memoryStorage } from 'portcullis';
 * import { fixtures } from 'portcullis/testing';
 *
 * const storage = memoryStorage();
 * const client = fixtures.client({ metadata: { ...fixtures.client().metadata, client_name: 'Extra test' } });
 * await storage.clients.create(client);
 * ```
 * @see docs/storage.md, "Writing and testing another adapter"
 * @group Conformance Kit
 */
export const fixtures = {
  /** A public, dynamically registered client with a loopback redirect URI. Every field can be overridden. */
  client(overrides: Partial<ClientRecord> = {}): ClientRecord {
    return {
      clientId: randomId('client'),
      metadata: {
        redirect_uris: ['http://127.0.0.1:49152/cb'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        application_type: 'native',
        client_name: 'Kit client',
      },
      origin: 'dynamic',
      createdAt: NOW,
      ...overrides,
    };
  },
  /** A pending authorization, unbound, expiring in 10 minutes. Every field can be overridden. */
  pending(overrides: Partial<PendingAuthorizationRecord> = {}): PendingAuthorizationRecord {
    return {
      idHash: randomHash(),
      request: {
        clientId: randomId('client'),
        redirectUri: 'http://127.0.0.1:49152/cb',
        redirectUriSent: true,
        state: 'xyz',
        scope: ['openid', 'courses:read'],
        resources: ['https://as.example/mcp'],
        codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        codeChallengeMethod: 'S256',
        prompt: [],
      },
      createdAt: NOW,
      expiresAt: NOW + 600,
      ...overrides,
    };
  },
  /** An unconsumed authorization code, expiring in 60 seconds. Every field can be overridden. */
  code(overrides: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord {
    return {
      codeHash: randomHash(),
      grantId: randomId('grant'),
      clientId: randomId('client'),
      userId: randomId('user'),
      redirectUri: 'http://127.0.0.1:49152/cb',
      redirectUriSent: true,
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      codeChallengeMethod: 'S256',
      scope: ['openid'],
      resources: ['https://as.example'],
      nonce: 'n-0S6_WzA2Mj',
      authTime: NOW - 10,
      createdAt: NOW,
      expiresAt: NOW + 60,
      ...overrides,
    };
  },
  /** An active grant, expiring in 90 days. Every field can be overridden. */
  grant(overrides: Partial<GrantRecord> = {}): GrantRecord {
    return {
      grantId: randomId('grant'),
      clientId: randomId('client'),
      userId: randomId('user'),
      scope: ['openid', 'courses:read'],
      resources: ['https://as.example'],
      authTime: NOW - 10,
      createdAt: NOW,
      expiresAt: NOW + 90 * 86400,
      ...overrides,
    };
  },
  /** The grant a code creates when redeemed at `now` (its id, client, user, scope, resources, auth time). */
  grantOf(code: AuthorizationCodeRecord, now = NOW): GrantRecord {
    return fixtures.grant({
      grantId: code.grantId,
      clientId: code.clientId,
      userId: code.userId,
      scope: code.scope,
      resources: code.resources,
      authTime: code.authTime,
      createdAt: now,
    });
  },
  /** An access token of `grant`, expiring in 15 minutes. Every field can be overridden. */
  accessToken(grant: GrantRecord, overrides: Partial<AccessTokenRecord> = {}): AccessTokenRecord {
    return {
      tokenHash: randomHash(),
      jti: randomId('jti'),
      grantId: grant.grantId,
      clientId: grant.clientId,
      userId: grant.userId,
      scope: grant.scope,
      audience: grant.resources,
      issuedAt: NOW,
      expiresAt: NOW + 900,
      ...overrides,
    };
  },
  /** A refresh token of `grant`, expiring in 30 days. Every field can be overridden. */
  refreshToken(grant: GrantRecord, overrides: Partial<RefreshTokenRecord> = {}): RefreshTokenRecord {
    return {
      tokenHash: randomHash(),
      grantId: grant.grantId,
      clientId: grant.clientId,
      userId: grant.userId,
      scope: grant.scope,
      resources: grant.resources,
      authTime: grant.authTime,
      issuedAt: NOW,
      expiresAt: NOW + 30 * 86400,
      ...overrides,
    };
  },
  /** An active ES256 signing key (its JWK is a placeholder, not a usable key). Every field can be overridden. */
  signingKey(overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord {
    return {
      kid: randomId('kid'),
      alg: 'ES256',
      privateJwk: JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd' }),
      createdAt: NOW,
      activatesAt: NOW,
      ...overrides,
    };
  },
};
