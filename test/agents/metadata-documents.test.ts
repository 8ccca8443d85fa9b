/**
 * Client ID Metadata Documents shaped like those agents publish (August 2026), served to the
 * library through an injected fetcher, each through the whole flow: authorize → consent → code at
 * the redirect URI the agent chose → token (PKCE; a public client names itself, ChatGPT's proves its
 * key) → refresh.
 *
 * - Claude Code lists port-less loopback redirect URIs (`http://localhost/callback`,
 *   `http://127.0.0.1/callback`) and listens on an ephemeral port each run; no
 *   `application_type`. A registered loopback URI, with or without a port, is port-agnostic
 *   (RFC 8252 §7.3; CONFORMANCE §14), and each host matches only itself.
 * - VS Code lists `http://127.0.0.1:33418/` and `https://vscode.dev/redirect`, says `native`, and
 *   lists the device authorization grant among its grant types, which this server does not offer
 *   and ignores (RFC 7591 §2).
 * - ChatGPT's connectors redirect to a fixed https URI on chatgpt.com, matched exactly, and their
 *   documents declare `private_key_jwt` with a `jwks_uri` and nothing else: the code exchange and
 *   the refresh each carry a client assertion (RFC 7523 §2.2; PKJ-01) verified with the keys
 *   fetched from `jwks_uri` through the same injected fetcher, and a code cannot be redeemed
 *   without one. The attacks on assertions are in test/handlers/private-key-jwt.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAssertion, clientAssertion } from '../helpers/client-assertion.js';
import {
  consentFields,
  Harness,
  ISSUER,
  json,
  type Pkce,
  pkce,
  type RegisteredClient,
  redirectParams,
} from '../helpers/harness.js';
import { type ScriptedFetcher, scriptedFetcher } from '../helpers/metadata-documents.js';
import { testKey } from '../protocol/key-fixtures.js';

const CLAUDE_CODE = 'https://claude.ai/oauth/claude-code-client-metadata';
const VS_CODE = 'https://vscode.dev/oauth/client-metadata.json';
const CHATGPT = 'https://chatgpt.com/oauth/5d2c8a01/client.json';
const CHATGPT_JWKS = 'https://chatgpt.com/oauth/5d2c8a01/jwks.json';
const chatgptKey = await testKey('RS256', 'chatgpt-connector-1');

/** The documents, as their publishers shape them. */
const DOCUMENTS: Record<string, Record<string, unknown>> = {
  [CLAUDE_CODE]: {
    client_id: CLAUDE_CODE,
    client_name: 'Claude Code',
    client_uri: 'https://claude.ai',
    redirect_uris: ['http://localhost/callback', 'http://127.0.0.1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  },
  [VS_CODE]: {
    client_id: VS_CODE,
    client_name: 'Visual Studio Code',
    client_uri: 'https://code.visualstudio.com',
    application_type: 'native',
    redirect_uris: ['http://127.0.0.1:33418/', 'https://vscode.dev/redirect'],
    grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  },
  [CHATGPT]: {
    client_id: CHATGPT,
    client_name: 'ChatGPT',
    client_uri: 'https://chatgpt.com',
    redirect_uris: ['https://chatgpt.com/connector_platform_oauth_redirect'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'private_key_jwt',
    jwks_uri: CHATGPT_JWKS,
  },
};

let h: Harness;
let documents: ScriptedFetcher;

beforeAll(async () => {
  documents = scriptedFetcher();
  for (const [clientId, body] of Object.entries(DOCUMENTS)) {
    documents.serve(clientId, { body, cacheControl: 'max-age=300' });
  }
  documents.serve(CHATGPT_JWKS, { body: { keys: [chatgptKey.publicJwk] }, cacheControl: 'max-age=300' });
  h = await Harness.start({
    options: { clientIdMetadataDocuments: { enabled: true, fetcher: documents.fetcher } },
  });
});
afterAll(() => h.close());

/** The agent's authorization request, from `redirectUri`, up to the consent page. */
async function consentPage(clientId: string, redirectUri: string, p: Pkce) {
  const client: RegisteredClient = { client_id: clientId, redirect_uris: [redirectUri] };
  const cookie = h.login('ada');
  const page = await h.authorize(h.authorizeUrl(client, p, { scope: 'openid courses:read' }), cookie);
  return { page, cookie };
}

/**
 * How a client authenticates each token request: a public client names itself; ChatGPT's adds a
 * fresh client assertion signed by its key (a `jti` is accepted once).
 */
async function clientAuthentication(clientId: string): Promise<Record<string, string>> {
  if (DOCUMENTS[clientId]?.token_endpoint_auth_method !== 'private_key_jwt') return { client_id: clientId };
  const assertion = await clientAssertion(chatgptKey, clientId, { now: h.clock.now(), aud: ISSUER });
  return { client_id: clientId, ...asAssertion(assertion) };
}

/** Authorize → allow → code at `redirectUri` → token → refresh, as the agent would. */
async function completeFlow(clientId: string, redirectUri: string) {
  const p = pkce();
  const { page, cookie } = await consentPage(clientId, redirectUri, p);
  expect(page.status, page.body.slice(0, 300)).toBe(200);
  const decided = await h.decide(consentFields(page), 'allow', cookie);
  expect(decided.status).toBe(303);
  const location = new URL(decided.headers.location!);
  expect(`${location.origin}${location.pathname}`).toBe(redirectUri.replace(/\?.*$/, ''));
  const code = redirectParams(decided).get('code')!;

  const token = await h.token({
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    code_verifier: p.verifier,
    ...(await clientAuthentication(clientId)),
  });
  expect(token.status, token.body).toBe(200);
  const tokens = json(token) as { access_token: string; refresh_token?: string; scope: string };
  expect(tokens.scope).toBe('openid courses:read');
  // The document lists the refresh_token grant, so a refresh token, with no offline_access (SEP-2207).
  expect(tokens.refresh_token).toBeTypeOf('string');
  const refreshed = await h.token({
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
    ...(await clientAuthentication(clientId)),
  });
  expect(refreshed.status, refreshed.body).toBe(200);
  return { page, tokens };
}

describe("Claude Code's document: port-less loopback redirect URIs (RFC 8252 §7.3; CIMD-06)", () => {
  it('completes the flow on an ephemeral port of localhost, the consent page naming claude.ai and that port', async () => {
    const { page } = await completeFlow(CLAUDE_CODE, 'http://localhost:61357/callback');
    expect(page.body).toContain('<span class="host">claude.ai</span>');
    expect(page.body).toContain('calls itself “Claude Code”');
    expect(page.body).toContain('<code>localhost:61357</code>, a program on this computer');
  });

  it('completes the flow on another port of 127.0.0.1, the second URI listed', async () => {
    await completeFlow(CLAUDE_CODE, 'http://127.0.0.1:49733/callback');
  });

  it.each([
    ['another path', 'http://localhost:61357/other'],
    ['a host it does not list ([::1])', 'http://[::1]:61357/callback'],
    ['https on localhost', 'https://localhost:61357/callback'],
    ['a trailing slash', 'http://localhost:61357/callback/'],
  ])('refuses %s with a 400 page, never a redirect (RFC 6749 §4.1.2.1)', async (_name, redirectUri) => {
    const { page } = await consentPage(CLAUDE_CODE, redirectUri, pkce());
    expect(page.status).toBe(400);
    expect(page.headers.location).toBeUndefined();
  });

  it('binds the code to the redirect URI with its port: another port at the token endpoint is refused (RFC 6749 §4.1.3)', async () => {
    const p = pkce();
    const { page, cookie } = await consentPage(CLAUDE_CODE, 'http://localhost:61357/callback', p);
    const code = redirectParams(await h.decide(consentFields(page), 'allow', cookie)).get('code')!;
    const token = await h.token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://localhost:61358/callback',
      client_id: CLAUDE_CODE,
      code_verifier: p.verifier,
    });
    expect(token.status).toBe(400);
    expect(json(token).error).toBe('invalid_grant');
  });
});

describe("VS Code's document: a loopback URI with a port, an https URI, a grant type this server lacks", () => {
  it('completes the flow on the port it lists, and on an ephemeral one (a registered port is not binding on loopback)', async () => {
    await completeFlow(VS_CODE, 'http://127.0.0.1:33418/');
    await completeFlow(VS_CODE, 'http://127.0.0.1:50211/');
  });

  it('completes the flow on vscode.dev, an https redirect URI matched exactly', async () => {
    const { page } = await completeFlow(VS_CODE, 'https://vscode.dev/redirect');
    expect(page.body).toContain('<span class="host">vscode.dev</span>');
    expect(page.body).toContain('The authorization will be sent to <code>vscode.dev</code>.');
  });

  it('refuses its https redirect URI with another path, or with a port (only loopback ports float)', async () => {
    for (const redirectUri of ['https://vscode.dev/redirect2', 'https://vscode.dev:8443/redirect']) {
      expect((await consentPage(VS_CODE, redirectUri, pkce())).page.status).toBe(400);
    }
  });
});

describe("a ChatGPT connector's document: private_key_jwt only, with a jwks_uri (RFC 7523 §2.2; PKJ-01)", () => {
  const redirectUri = 'https://chatgpt.com/connector_platform_oauth_redirect';

  it('completes the flow on its fixed https URI, the code exchange and the refresh each authenticated by an assertion', async () => {
    const { page } = await completeFlow(CHATGPT, redirectUri);
    expect(page.body).toContain('<span class="host">chatgpt.com</span>');
    // The keys came from its jwks_uri, through the fetcher the server was given.
    expect(documents.fetches).toContain(CHATGPT_JWKS);
  });

  it('cannot redeem its code without an assertion: invalid_client, as for any confidential client', async () => {
    const client: RegisteredClient = { client_id: CHATGPT, redirect_uris: [redirectUri] };
    const { code, pkce: p } = await h.obtainCode(client, { extra: { scope: 'openid courses:read' } });
    const exchange = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: p.verifier,
    };
    const unauthenticated = await h.token({ ...exchange, client_id: CHATGPT });
    // 400, not 401: no Authorization header was tried (RFC 6749 §5.2).
    expect(unauthenticated.status).toBe(400);
    expect(json(unauthenticated).error).toBe('invalid_client');
    // The code is still good for the client that proves its key.
    expect((await h.token({ ...exchange, ...(await clientAuthentication(CHATGPT)) })).status).toBe(200);
  });

  it('refuses a redirect URI the document does not list', async () => {
    const { page } = await consentPage(
      CHATGPT,
      'https://chatgpt.com/connector_platform_oauth_redirect/x',
      pkce(),
    );
    expect(page.status).toBe(400);
  });
});

describe('the documents are fetched once and cached (CIMD-09)', () => {
  it('each agent document, and ChatGPT’s keys, were fetched once for all of its flows', () => {
    for (const url of [...Object.keys(DOCUMENTS), CHATGPT_JWKS]) {
      expect(documents.fetches.filter((f) => f === url)).toHaveLength(1);
    }
  });
});
