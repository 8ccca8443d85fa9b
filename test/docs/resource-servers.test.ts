/**
 * What docs/resource-servers.md says about guards, verifiers and metadata, checked with the guide's
 * own code (docs/snippets/resource-servers.ts). Tokens are written straight to storage: the guards
 * and the introspection endpoint only look tokens up by their hash.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createOAuth,
  createOAuthWithIntrospection,
  introspectionGuard,
  storageGuard,
} from '../../docs/snippets/resource-servers.js';
import { createFetchHandler } from '../../src/adapters/fetch.js';
import { sha256 } from '../../src/core/crypto.js';
import type { AuthorizationServer } from '../../src/server.js';
import { memoryStorage } from '../../src/storage/memory.js';
import type { Storage } from '../../src/storage/types.js';
import { seedGrant } from '../helpers/seed-grant.js';

const API = 'https://api.example.com';
const SECRET = 'notes-api-secret-0123456789';
let server: AuthorizationServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Stores a grant with one access token for `audience`; returns the token and the grant id. */
async function issue(storage: Storage, audience: string, scope = ['notes:read']) {
  const now = Math.floor(Date.now() / 1000);
  const token = `tok-${crypto.randomUUID()}`;
  const grantId = crypto.randomUUID();
  await seedGrant(
    storage,
    {
      grantId,
      clientId: 'cli',
      userId: 'ada',
      scope,
      resources: [audience],
      authTime: now,
      createdAt: now,
      expiresAt: now + 3600,
    },
    {
      tokenHash: await sha256(token),
      jti: crypto.randomUUID(),
      grantId,
      clientId: 'cli',
      userId: 'ada',
      scope,
      audience: [audience],
      issuedAt: now,
      expiresAt: now + 900,
    },
  );
  return { token, grantId };
}

describe('docs/resource-servers.md', () => {
  it('serves protected-resource metadata for the same-origin resource, at the path-inserted URL', async () => {
    server = await createOAuth(memoryStorage());
    const handler = createFetchHandler(server);
    const mcp = await handler(
      new Request('https://auth.example.com/.well-known/oauth-protected-resource/mcp'),
    );
    expect(await mcp.json()).toMatchObject({
      resource: 'https://auth.example.com/mcp',
      authorization_servers: ['https://auth.example.com'],
      bearer_methods_supported: ['header'],
      resource_name: 'Notes MCP server',
    });
    // api.example.com is another origin: its document is its own to serve.
    expect(
      (await handler(new Request('https://auth.example.com/.well-known/oauth-protected-resource'))).status,
    ).toBe(404);
    const metadata = (await (
      await handler(new Request('https://auth.example.com/.well-known/oauth-authorization-server'))
    ).json()) as Record<string, unknown>;
    expect(metadata.protected_resources).toEqual([API, 'https://auth.example.com/mcp']);
  });

  it('the storage verifier: a valid token passes, a revoked one is refused on the next request', async () => {
    const storage = memoryStorage();
    const guard = storageGuard(storage);
    const { token, grantId } = await issue(storage, API);
    const ok = await guard.check({ headers: { authorization: `Bearer ${token}` } }, { scope: 'notes:read' });
    expect(ok).toMatchObject({ ok: true, principal: { anonymous: false, subject: 'ada', audience: [API] } });
    await storage.grants.revoke(grantId, Math.floor(Date.now() / 1000));
    const refused = await guard.check({ headers: { authorization: `Bearer ${token}` } });
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.response.status).toBe(401);
      expect(refused.response.headers['www-authenticate']).toBe(
        `Bearer error="invalid_token", error_description="the access token is invalid, expired or revoked", resource_metadata="${API}/.well-known/oauth-protected-resource", ` +
          `DPoP algs="ES256 EdDSA RS256 PS256 ES384 Ed25519", resource_metadata="${API}/.well-known/oauth-protected-resource"`,
      );
    }
  });

  it('challenges: no token → 401 without an error code; missing scope → 403 insufficient_scope; other audience → 401', async () => {
    const storage = memoryStorage();
    const guard = storageGuard(storage);
    const none = await guard.check({ headers: {} }, { scope: 'notes:read', required: true });
    expect(!none.ok && none.response.headers['www-authenticate']).toBe(
      `Bearer scope="notes:read", resource_metadata="${API}/.well-known/oauth-protected-resource", ` +
        `DPoP algs="ES256 EdDSA RS256 PS256 ES384 Ed25519", scope="notes:read", resource_metadata="${API}/.well-known/oauth-protected-resource"`,
    );
    expect(await guard.check({ headers: {} })).toEqual({ ok: true, principal: { anonymous: true } });
    const { token } = await issue(storage, API, ['openid']);
    const scope = await guard.check(
      { headers: { authorization: `Bearer ${token}` } },
      { scope: 'notes:read' },
    );
    expect(!scope.ok && scope.response.status).toBe(403);
    expect(!scope.ok && scope.error.code).toBe('insufficient_scope');
    const other = await issue(storage, 'https://auth.example.com/mcp');
    const audience = await guard.check({ headers: { authorization: `Bearer ${other.token}` } });
    expect(!audience.ok && audience.response.status).toBe(401);
  });

  it('the introspection verifier asks the configured caller endpoint on every request', async () => {
    const storage = memoryStorage();
    server = await createOAuthWithIntrospection(storage, SECRET);
    const handler = createFetchHandler(server);
    let calls = 0;
    const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
      calls++;
      return handler(new Request(input, init));
    }) as typeof fetch;
    const guard = introspectionGuard(SECRET, fetchImpl);
    const { token, grantId } = await issue(storage, API);
    const ok = await guard.check({ headers: { authorization: `Bearer ${token}` } }, { scope: 'notes:read' });
    expect(ok).toMatchObject({ ok: true, principal: { subject: 'ada', clientId: 'cli' } });
    await server.revokeGrant(grantId);
    expect((await guard.check({ headers: { authorization: `Bearer ${token}` } })).ok).toBe(false);
    expect(calls).toBe(2);
    // A wrong secret is a failed introspection call: the verifier throws.
    await expect(
      introspectionGuard('another-secret-0123456789', fetchImpl).check({
        headers: { authorization: `Bearer ${token}` },
      }),
    ).rejects.toThrow('introspection failed with status 401');
  });
});
