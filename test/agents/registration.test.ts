/**
 * Registrations as agents send them (RFC 7591), and what they are then granted.
 *
 * - Claude Code and GitHub Copilot CLI register without `scope`. RFC 7591 §2 leaves it to the
 *   server ("MAY register a client with a default set of scopes"); decided (docs/mcp.md): nothing
 *   is registered, the client may request any scope the server supports, and it gets what the
 *   user consents to and the scope policy lets that user grant. MCP clients request the scopes of
 *   the challenge or of the resource's metadata (`scopes_supported`), so the resource metadata,
 *   not the registration, decides what an agent asks for. A request without `scope` gets the
 *   policy's default scopes, none by default: `invalid_scope` (RFC 6749 §3.3).
 * - Agents list `refresh_token` in `grant_types` and expect a refresh token without asking for
 *   `offline_access` (MCP SEP-2207; CONFORMANCE §14: refresh tokens go to clients registered
 *   with the `refresh_token` grant).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness, json, pkce, type RegisteredClient, redirectParams } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(() => h.close());

/** What Claude Code sends: no scope, a localhost callback on the port it listens on. */
const CLAUDE_CODE_REGISTRATION = {
  client_name: 'Claude Code (school)',
  redirect_uris: ['http://localhost:54107/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};

/** A registration that leaves everything but the name and redirect URI to the server. */
const MINIMAL_REGISTRATION = { client_name: 'Copilot CLI', redirect_uris: ['http://127.0.0.1:8765/'] };

async function register(body: Record<string, unknown>) {
  const response = await h.send({
    method: 'POST',
    url: '/api/oauth/register',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: json(response) };
}

/** Authorize (login, allow) and redeem the code; returns the token response. */
async function tokensFor(client: RegisteredClient, scope: string | undefined) {
  const { code, pkce: p } = await h.obtainCode(client, { extra: { scope } });
  const response = await h.exchange(client, code, p);
  expect(response.status, response.body).toBe(200);
  return json(response);
}

describe('a registration without scope (RFC 7591 §2; MCP: Claude Code, GitHub Copilot CLI)', () => {
  it('is registered without a scope, with the effective grant types and auth method echoed (REG-01)', async () => {
    for (const registration of [CLAUDE_CODE_REGISTRATION, MINIMAL_REGISTRATION]) {
      const { status, body } = await register(registration);
      expect(status).toBe(201);
      expect(body).not.toHaveProperty('scope');
      expect(body).toMatchObject({
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      });
    }
  });

  it('gets the scopes it then requests, as the resource metadata names them', async () => {
    const { body } = await register(CLAUDE_CODE_REGISTRATION);
    const client = body as unknown as RegisteredClient;
    const tokens = await tokensFor(client, 'courses:read account:read');
    expect(tokens.scope).toBe('courses:read account:read');
  });

  it('is refused a scope the server does not support (invalid_scope, RFC 6749 §4.1.2.1)', async () => {
    const { body } = await register(CLAUDE_CODE_REGISTRATION);
    const client = body as unknown as RegisteredClient;
    const cookie = h.login('ada');
    const answer = await h.authorize(h.authorizeUrl(client, pkce(), { scope: 'courses:read root' }), cookie);
    expect(redirectParams(answer).get('error')).toBe('invalid_scope');
  });

  it('is refused a request without scope when the policy has no default scopes (RFC 6749 §3.3)', async () => {
    const { body } = await register(MINIMAL_REGISTRATION);
    const client = body as unknown as RegisteredClient;
    const cookie = h.login('ada');
    const answer = await h.authorize(h.authorizeUrl(client, pkce(), { scope: undefined }), cookie);
    expect(redirectParams(answer).get('error')).toBe('invalid_scope');
  });
});

describe('a registration with the refresh_token grant and no offline_access (MCP SEP-2207)', () => {
  it('gets a refresh token with scopes that do not include offline_access, and can use it', async () => {
    const { body } = await register(CLAUDE_CODE_REGISTRATION);
    const client = body as unknown as RegisteredClient;
    const tokens = await tokensFor(client, 'openid courses:read');
    expect(tokens.scope).toBe('openid courses:read');
    expect(tokens.refresh_token).toBeTypeOf('string');
    const refreshed = await h.token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: client.client_id,
    });
    expect(refreshed.status, refreshed.body).toBe(200);
    expect(json(refreshed).scope).toBe('openid courses:read');
  });

  it('a registration with authorization_code alone gets no refresh token (RFC 6749 §5.1: OPTIONAL)', async () => {
    const { body } = await register({ ...CLAUDE_CODE_REGISTRATION, grant_types: ['authorization_code'] });
    const client = body as unknown as RegisteredClient;
    const tokens = await tokensFor(client, 'openid courses:read');
    expect(tokens).not.toHaveProperty('refresh_token');
  });
});
