/**
 * A client identified by a Client ID Metadata Document, served by a local
 * HTTPS server (throwaway certificate), completes the flow without registering: authorize →
 * consent (the client_id host shown prominently, the redirect host:port and the loopback warning:
 * CIMD-01, ATK-42) → token → refresh, the token endpoint treating the URL client as public
 * (CIMD-10). With the same server not allowed (the default special-use rules), the authorization
 * request answers a 400 page and nothing connects to it, nor to a canary (CIMD-07, ATK-37).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostLookup, ResolvedAddress } from '../../src/cimd/fetcher.js';
import type { ClientIdMetadataDocumentOptions } from '../../src/options.js';
import { consentFields, Harness, json, type Pkce, pkce, redirectParams } from '../helpers/harness.js';
import { type Canary, startCanary, startHttpsServer, type TestHttpsServer } from '../helpers/servers.js';
import { createTestCertificate, type TestCertificate } from '../helpers/tls.js';

let certificate: TestCertificate;
let documents: TestHttpsServer;
let canary: Canary;
/** The client's identifier: the URL of its metadata document. */
let clientId: string;

/** Name resolution of the test: `client.test` is the document server, `internal.test` the canary. */
const lookup: HostLookup = async (hostname) => {
  const table: Record<string, ResolvedAddress[]> = {
    'client.test': [{ address: '127.0.0.1', family: 4 }],
    'internal.test': [{ address: '127.0.0.2', family: 4 }],
  };
  const answer = table[hostname];
  if (answer === undefined) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return answer;
};

beforeAll(async () => {
  certificate = createTestCertificate(['client.test', 'internal.test']);
  documents = await startHttpsServer(certificate, '127.0.0.1');
  // A listener where `internal.test` points: a refused fetch must never reach it.
  canary = await startCanary('127.0.0.2', documents.port);
  clientId = `https://client.test:${documents.port}/oauth/client.json`;
  documents.route('/oauth/client.json', (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' }).end(
      JSON.stringify({
        client_id: clientId,
        client_name: 'Metadata Agent',
        client_uri: 'https://client.test/',
        // Registered without a port: any loopback port is accepted at authorization (RFC 8252 §7.3).
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    );
  });
});

afterAll(async () => {
  await documents.close();
  await canary.close();
});

function harness(cimd: ClientIdMetadataDocumentOptions): Promise<Harness> {
  return Harness.start({ options: { clientIdMetadataDocuments: { enabled: true, ...cimd } } });
}

/** The authorization URL of the metadata-document client, with a loopback port of its choosing. */
function authorizeUrl(
  h: Harness,
  id: string,
  p: Pkce,
  redirectUri = 'http://127.0.0.1:53412/callback',
): string {
  return h.authorizeUrl({ client_id: id, redirect_uris: [redirectUri] }, p, {
    scope: 'openid courses:read',
    state: 'cimd-state',
  });
}

describe('a metadata-document client, allowed by the test (CIMD-01, CIMD-10, ATK-42)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ ca: certificate.cert, lookup, allowSpecialUseAddresses: ['127.0.0.1'] });
  });
  afterAll(() => h.close());

  it('authorize without registration → consent → token → refresh', async () => {
    const p = pkce();
    const cookie = h.login('ada');
    const fetchesBefore = documents.requests.length;
    const page = await h.authorize(authorizeUrl(h, clientId, p), cookie);
    expect(page.status).toBe(200);
    expect(documents.requests.length).toBe(fetchesBefore + 1);

    // Who is asking: the client_id host, prominently; the self-asserted name only as secondary text.
    expect(page.body).toContain(`<span class="host">client.test:${documents.port}</span>`);
    expect(page.body).toContain('calls itself “Metadata Agent”');
    expect(page.body).toContain(`<code>${clientId}</code>`);
    // Where the code goes: the loopback host:port chosen in this request, with the warning.
    expect(page.body).toContain('<code>127.0.0.1:53412</code>, a program on this computer');

    const decided = await h.decide(consentFields(page), 'allow', cookie);
    expect(decided.status).toBe(303);
    expect(decided.headers.location?.startsWith('http://127.0.0.1:53412/callback?')).toBe(true);
    const code = redirectParams(decided).get('code')!;
    expect(redirectParams(decided).get('state')).toBe('cimd-state');

    // A public client: client_id (the URL) and the PKCE verifier, no secret.
    const token = await h.token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://127.0.0.1:53412/callback',
      client_id: clientId,
      code_verifier: p.verifier,
    });
    expect(token.status).toBe(200);
    const tokens = json(token) as { access_token: string; refresh_token: string; id_token: string };
    expect(tokens.refresh_token).toBeTypeOf('string');
    const idClaims = JSON.parse(Buffer.from(tokens.id_token.split('.')[1]!, 'base64url').toString()) as {
      aud: string;
    };
    expect(idClaims.aud).toBe(clientId);

    const refreshed = await h.token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    expect((json(refreshed) as { refresh_token: string }).refresh_token).not.toBe(tokens.refresh_token);
  });

  it('treats the URL client as public at the token endpoint: a secret is refused (CIMD-10)', async () => {
    const p = pkce();
    const cookie = h.login('ada');
    const page = await h.authorize(authorizeUrl(h, clientId, p), cookie);
    const code = redirectParams(await h.decide(consentFields(page), 'allow', cookie)).get('code')!;
    const exchange = (extra: Record<string, string>) =>
      h.token({
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://127.0.0.1:53412/callback',
        code_verifier: p.verifier,
        client_id: clientId,
        ...extra,
      });
    const withSecret = await exchange({ client_secret: 'anything' });
    expect(withSecret.status).toBe(400);
    expect(json(withSecret).error).toBe('invalid_client');
    // The code is bound to the URL client: another client cannot redeem it.
    const other = await h.register();
    const stolen = await exchange({ client_id: other.client_id });
    expect(stolen.status).toBe(400);
    expect(json(stolen).error).toBe('invalid_grant');
    // The genuine public exchange still works (the refused attempts did not consume the code).
    expect((await exchange({})).status).toBe(200);
  });

  it('refuses a redirect URI the document does not list, with a 400 page (CIMD-06)', async () => {
    const page = await h.authorize(
      authorizeUrl(h, clientId, pkce(), 'http://127.0.0.1:53412/elsewhere'),
      h.login('ada'),
    );
    expect(page.status).toBe(400);
    expect(page.headers.location).toBeUndefined();
  });
});

describe('the same server, not allowed: default special-use rules (CIMD-07, ATK-37)', () => {
  let h: Harness;
  beforeAll(async () => {
    // Trusts the certificate and resolves the names, but allows no special-use address.
    h = await harness({ ca: certificate.cert, lookup });
  });
  afterAll(() => h.close());

  it.each([
    ['the document server by name', () => clientId],
    ['a name resolving to the canary', () => `https://internal.test:${documents.port}/oauth/client.json`],
  ])('%s: a 400 page, no redirect, no connection', async (_name, id) => {
    const connections = documents.connections();
    const page = await h.authorize(authorizeUrl(h, id(), pkce()), h.login('ada'));
    expect(page.status).toBe(400);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers.location).toBeUndefined();
    expect(page.body).toContain('invalid_client');
    expect(page.body).not.toContain('Allow');
    expect(documents.connections()).toBe(connections);
    expect(canary.accepted()).toBe(0);
  });

  it('the token endpoint does not know the refused client either', async () => {
    const connections = documents.connections();
    const response = await h.token({
      grant_type: 'authorization_code',
      code: 'x'.repeat(43),
      redirect_uri: 'http://127.0.0.1:53412/callback',
      client_id: clientId,
      code_verifier: 'v'.repeat(43),
    });
    expect(response.status).toBe(400);
    expect(json(response).error).toBe('invalid_client');
    expect(documents.connections()).toBe(connections);
  });
});
