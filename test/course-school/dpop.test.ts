/**
 * A DPoP client against the reference server (RFC 9449; DPOP-01..03): the server advertises DPoP
 * (the library's metadata), a code exchange and a refresh with proofs give DPoP-bound tokens, and
 * the API (`/api/v1`) and `/mcp` accept them with a proof of each request, and refuse them as
 * bearer tokens or with a replayed proof.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { startTestServer } from '../helpers/course-school.js';
import { type DpopTestClient, dpopClient } from '../helpers/dpop.js';
import {
  ADA,
  authorize,
  registerClient,
  type Site,
  signIn,
  siteOf,
  type TokenSet,
} from '../helpers/school-flow.js';

let app: CourseSchoolServer;
let site: Site;
let dpop: DpopTestClient;
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  app = await startTestServer();
  site = siteOf(app);
  dpop = await dpopClient(now);
});
afterAll(() => app.close());

const tokenUrl = () => `${app.issuer}/api/oauth/token`;

async function tokenRequest(params: Record<string, string>, proof: string): Promise<Response> {
  return fetch(`${site.base}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
    body: new URLSearchParams(params),
  });
}

/** Registers a public client and exchanges a code with a proof: DPoP-bound tokens. */
async function boundTokens(
  scope: string,
  resource?: string,
): Promise<{ clientId: string; tokens: TokenSet }> {
  const redirectUri = 'http://127.0.0.1:49152/callback';
  const clientId = await registerClient(site, redirectUri, { client_name: 'DPoP agent' });
  const cookie = await signIn(site, ADA);
  const authorized = await authorize(
    site,
    { clientId, redirectUri, scope, ...(resource === undefined ? {} : { resource }) },
    { cookie },
  );
  const response = await tokenRequest(
    {
      grant_type: 'authorization_code',
      code: authorized.callback.searchParams.get('code')!,
      redirect_uri: redirectUri,
      client_id: clientId,
      code_verifier: authorized.verifier,
    },
    await dpop.proof('POST', tokenUrl()),
  );
  const tokens = (await response.json()) as TokenSet;
  expect(response.status, JSON.stringify(tokens)).toBe(200);
  return { clientId, tokens };
}

/** Calls `/api/v1/account` with the DPoP scheme and `proof`. */
function account(accessToken: string, proof: string): Promise<Response> {
  return fetch(`${site.base}/api/v1/account`, {
    headers: { authorization: `DPoP ${accessToken}`, dpop: proof },
  });
}

describe('the reference server with a DPoP client (RFC 9449)', () => {
  it('DPOP-01 advertises dpop_signing_alg_values_supported', async () => {
    const metadata = (await (
      await fetch(`${site.base}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(metadata.dpop_signing_alg_values_supported).toEqual(
      expect.arrayContaining(['ES256', 'EdDSA', 'RS256']),
    );
  });

  it('DPOP-03 code exchange, API call, refresh and API call again, all with proofs', async () => {
    const { clientId, tokens } = await boundTokens('openid account:read');
    expect(tokens.token_type).toBe('DPoP');
    const apiUrl = `${app.issuer}/api/v1/account`;
    const first = await account(
      tokens.access_token,
      await dpop.proof('GET', apiUrl, { accessToken: tokens.access_token }),
    );
    expect(first.status, await first.clone().text()).toBe(200);

    const refreshed = await tokenRequest(
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId },
      await dpop.proof('POST', tokenUrl()),
    );
    const next = (await refreshed.json()) as TokenSet;
    expect(refreshed.status, JSON.stringify(next)).toBe(200);
    expect(next.token_type).toBe('DPoP');
    const second = await account(
      next.access_token,
      await dpop.proof('GET', apiUrl, { accessToken: next.access_token }),
    );
    expect(second.status).toBe(200);
  });

  it('DPOP-03 attack: the bound token as Bearer, or with a replayed proof → 401', async () => {
    const { tokens } = await boundTokens('account:read');
    const asBearer = await fetch(`${site.base}/api/v1/account`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token".*, DPoP algs="/);
    const proof = await dpop.proof('GET', `${app.issuer}/api/v1/account`, {
      accessToken: tokens.access_token,
    });
    expect((await account(tokens.access_token, proof)).status).toBe(200);
    const replay = await account(tokens.access_token, proof);
    expect(replay.status).toBe(401);
    expect(replay.headers.get('www-authenticate')).toContain('error="invalid_dpop_proof"');
  });

  it('DPOP-03 /mcp accepts a DPoP-bound token with a proof, and refuses it as Bearer', async () => {
    const mcpUrl = `${app.issuer}/mcp`;
    const { tokens } = await boundTokens('courses:read', mcpUrl);
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'agent', version: '1' },
      },
    });
    const post = (headers: Record<string, string>) =>
      fetch(`${site.base}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: initialize,
      });
    const ok = await post({
      authorization: `DPoP ${tokens.access_token}`,
      dpop: await dpop.proof('POST', mcpUrl, { accessToken: tokens.access_token }),
    });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect((await post({ authorization: `Bearer ${tokens.access_token}` })).status).toBe(401);
  });
});
