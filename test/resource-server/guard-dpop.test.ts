/**
 * DPoP-bound tokens at resources (RFC 9449 §7; DPOP-03), end to end on a library server: a DPoP
 * client exchanges a code and refreshes with proofs, then calls an API through the guard (the pure
 * check and the Fetch adapter), UserInfo, and introspection; and the attacks: a proof replayed, for
 * another URL or method, by another key, with the hash of another token, a bound token as Bearer.
 */
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withGuard } from '../../src/adapters/fetch.js';
import type { GuardRequest, GuardResult, ResourceGuard } from '../../src/resource-server/guard.js';
import { jwksVerifier } from '../../src/resource-server/verifier.js';
import { parseBearerChallenge, parseDpopChallenge } from '../helpers/challenge.js';
import { type DpopTestClient, dpopClient } from '../helpers/dpop.js';
import { Harness, type HarnessOptions, ISSUER, json, type RegisteredClient } from '../helpers/harness.js';

const TOKEN_URL = `${ISSUER}/api/oauth/token`;
const API_URL = `${ISSUER}/api/me`;

let h: Harness;
let dpop: DpopTestClient;
let guard: ResourceGuard;

async function start(options: HarnessOptions['options'] = {}) {
  h = await Harness.start({ options });
  dpop = await dpopClient(() => h.clock.now());
  guard = h.server.guard({ resource: ISSUER });
}
afterEach(() => h.close());

/** A public client's code exchange with a proof: its DPoP-bound tokens. */
async function boundTokens(): Promise<{ client: RegisteredClient; access: string; refresh: string }> {
  const client = await h.register();
  const { code, pkce } = await h.obtainCode(client);
  const response = await h.token(
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirect_uris[0],
      client_id: client.client_id,
      code_verifier: pkce.verifier,
    },
    { dpop: await dpop.proof('POST', TOKEN_URL) },
  );
  expect(response.status, response.body).toBe(200);
  const body = json(response);
  expect(body.token_type).toBe('DPoP');
  return { client, access: String(body.access_token), refresh: String(body.refresh_token) };
}

function dpopRequest(access: string, proof: string, method = 'GET', url = '/api/me'): GuardRequest {
  return { headers: { authorization: `DPoP ${access}`, dpop: proof }, method, url };
}

function refused(result: GuardResult) {
  if (result.ok) throw new Error('expected a refusal');
  return {
    status: result.response.status,
    code: result.error.code,
    challenge: result.response.headers['www-authenticate'],
    nonce: result.response.headers['dpop-nonce'],
  };
}

describe('a DPoP client end to end (RFC 9449 §5, §7; DPOP-02, DPOP-03)', () => {
  beforeEach(() => start());

  it('DPOP-03 code exchange, API call through the guard, refresh, API call with the new token', async () => {
    const { client, access, refresh } = await boundTokens();
    const first = await guard.check(
      dpopRequest(access, await dpop.proof('GET', API_URL, { accessToken: access })),
      {
        scope: 'courses:read',
        required: true,
      },
    );
    expect(first.ok && !first.principal.anonymous && first.principal.dpopJkt).toBe(dpop.jkt);

    const refreshed = await h.token(
      { grant_type: 'refresh_token', refresh_token: refresh, client_id: client.client_id },
      { dpop: await dpop.proof('POST', TOKEN_URL) },
    );
    expect(refreshed.status, refreshed.body).toBe(200);
    const next = String(json(refreshed).access_token);
    const second = await guard.check(
      dpopRequest(next, await dpop.proof('GET', API_URL, { accessToken: next })),
    );
    expect(second.ok).toBe(true);
  });

  it('DPOP-03 the Fetch adapter passes the method, URL and DPoP header to the guard', async () => {
    const { access } = await boundTokens();
    const handler = withGuard(guard, { required: true }, async (_request, auth) =>
      Response.json({ sub: auth.anonymous ? null : auth.subject }),
    );
    const ok = await handler(
      new Request(API_URL, {
        headers: {
          authorization: `DPoP ${access}`,
          dpop: await dpop.proof('GET', API_URL, { accessToken: access }),
        },
      }),
    );
    expect(ok.status).toBe(200);
    const wrongUrl = await handler(
      new Request(`${ISSUER}/api/other`, {
        headers: {
          authorization: `DPoP ${access}`,
          dpop: await dpop.proof('GET', API_URL, { accessToken: access }),
        },
      }),
    );
    expect(wrongUrl.status).toBe(401);
  });

  it('DPOP-03 a refusal without a token challenges with Bearer first, then DPoP algs (RFC 9449 §7.1)', async () => {
    const r = refused(await guard.check({ headers: {}, method: 'GET', url: '/api/me' }, { required: true }));
    expect(r.status).toBe(401);
    expect(parseBearerChallenge(r.challenge).params.resource_metadata).toBeDefined();
    expect(parseDpopChallenge(r.challenge).params.algs).toBe('ES256 EdDSA RS256 PS256 ES384 Ed25519');
  });

  it('DPOP-03 the MCP SDK still reads resource_metadata and scope from the challenge with DPoP in it', async () => {
    const result = await guard.check(
      { headers: {}, method: 'POST', url: '/mcp' },
      { scope: 'courses:read', required: true },
    );
    if (result.ok) throw new Error('expected a refusal');
    const response = new Response(null, { status: 401, headers: result.response.headers });
    const params = extractWWWAuthenticateParams(response);
    expect(params.resourceMetadataUrl?.href).toBe(`${ISSUER}/.well-known/oauth-protected-resource`);
    expect(params.scope).toBe('courses:read');
  });

  it('DPOP-03 attack: a DPoP-bound token presented as Bearer → 401 invalid_token', async () => {
    const { access } = await boundTokens();
    const r = refused(
      await guard.check({ headers: { authorization: `Bearer ${access}` }, method: 'GET', url: '/api/me' }),
    );
    expect(r).toMatchObject({ status: 401, code: 'invalid_token' });
    expect(parseBearerChallenge(r.challenge).params.error).toBe('invalid_token');
  });

  it('DPOP-03 attack: a proof replayed at the resource → 401 invalid_dpop_proof', async () => {
    const { access } = await boundTokens();
    const proof = await dpop.proof('GET', API_URL, { accessToken: access });
    expect((await guard.check(dpopRequest(access, proof))).ok).toBe(true);
    const r = refused(await guard.check(dpopRequest(access, proof)));
    expect(r).toMatchObject({ status: 401, code: 'invalid_dpop_proof' });
    expect(parseDpopChallenge(r.challenge).params.error).toBe('invalid_dpop_proof');
  });

  it('DPOP-03 attack: a proof for another URL, or another method → 401 invalid_dpop_proof', async () => {
    const { access } = await boundTokens();
    const otherUrl = await dpop.proof('GET', `${ISSUER}/api/admin`, { accessToken: access });
    expect(refused(await guard.check(dpopRequest(access, otherUrl)))).toMatchObject({
      status: 401,
      code: 'invalid_dpop_proof',
    });
    const otherMethod = await dpop.proof('POST', API_URL, { accessToken: access });
    expect(refused(await guard.check(dpopRequest(access, otherMethod)))).toMatchObject({
      status: 401,
      code: 'invalid_dpop_proof',
    });
  });

  it('DPOP-03 the proof names the resource origin and the request path, whatever origin the request arrived on', async () => {
    const { access } = await boundTokens();
    const proof = await dpop.proof('GET', API_URL, { accessToken: access });
    expect(
      (await guard.check(dpopRequest(access, proof, 'GET', 'http://localhost:3000/api/me?page=2'))).ok,
    ).toBe(true);
  });

  it('DPOP-03 attack: a stolen bound token with a proof by the thief’s key → 401 invalid_token', async () => {
    const { access } = await boundTokens();
    const thief = await dpopClient(() => h.clock.now());
    const r = refused(
      await guard.check(dpopRequest(access, await thief.proof('GET', API_URL, { accessToken: access }))),
    );
    expect(r).toMatchObject({ status: 401, code: 'invalid_token' });
  });

  it('DPOP-01 attack: ath mismatch (a proof made for another token) → 401 invalid_dpop_proof', async () => {
    const { access } = await boundTokens();
    const { access: other } = await boundTokens();
    const r = refused(
      await guard.check(dpopRequest(access, await dpop.proof('GET', API_URL, { accessToken: other }))),
    );
    expect(r).toMatchObject({ status: 401, code: 'invalid_dpop_proof' });
    const noAth = await dpop.proof('GET', API_URL);
    expect(refused(await guard.check(dpopRequest(access, noAth)))).toMatchObject({
      code: 'invalid_dpop_proof',
    });
  });

  it('DPOP-03 the DPoP scheme without a proof → 401 invalid_dpop_proof; an unbound token as DPoP → 401 invalid_token', async () => {
    const { access } = await boundTokens();
    const r = refused(
      await guard.check({ headers: { authorization: `DPoP ${access}` }, method: 'GET', url: '/api/me' }),
    );
    expect(r).toMatchObject({ status: 401, code: 'invalid_dpop_proof' });
    const plain = await h.tokens();
    const bearer = String(plain.body.access_token);
    const u = refused(
      await guard.check(dpopRequest(bearer, await dpop.proof('GET', API_URL, { accessToken: bearer }))),
    );
    expect(u).toMatchObject({ status: 401, code: 'invalid_token' });
  });

  it('DPOP-03 a guard call without method and URL refuses a DPoP token (it cannot check the proof)', async () => {
    const { access } = await boundTokens();
    const proof = await dpop.proof('GET', API_URL, { accessToken: access });
    const r = refused(await guard.check({ headers: { authorization: `DPoP ${access}`, dpop: proof } }));
    expect(r).toMatchObject({ status: 401, code: 'invalid_token' });
  });

  it('DPOP-03 UserInfo accepts a bound token with a proof, and refuses it as Bearer', async () => {
    const { access } = await boundTokens();
    const url = `${ISSUER}/api/oauth/userinfo`;
    const ok = await h.send({
      method: 'GET',
      url: '/api/oauth/userinfo',
      headers: {
        authorization: `DPoP ${access}`,
        dpop: await dpop.proof('GET', url, { accessToken: access }),
      },
    });
    expect(ok.status, ok.body).toBe(200);
    expect(json(ok).sub).toBe('ada');
    const asBearer = await h.send({
      method: 'GET',
      url: '/api/oauth/userinfo',
      headers: { authorization: `Bearer ${access}` },
    });
    expect(asBearer.status).toBe(401);
    expect(json(asBearer).error).toBe('invalid_token');
    const noProof = await h.send({
      method: 'GET',
      url: '/api/oauth/userinfo',
      headers: { authorization: `DPoP ${access}` },
    });
    expect(noProof.status).toBe(401);
    expect(json(noProof).error).toBe('invalid_dpop_proof');
  });

  it('DPOP-02 introspection returns token_type DPoP and cnf.jkt for a bound token', async () => {
    // A client introspects its own tokens: a confidential client, whose access token is bound.
    const confidential = await h.register({ token_endpoint_auth_method: 'client_secret_post' });
    const { code, pkce } = await h.obtainCode(confidential);
    const response = await h.token(
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: confidential.redirect_uris[0],
        client_id: confidential.client_id,
        client_secret: confidential.client_secret,
        code_verifier: pkce.verifier,
      },
      { dpop: await dpop.proof('POST', TOKEN_URL) },
    );
    const token = String(json(response).access_token);
    const body = json(await h.introspect(confidential, token));
    expect(body).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: dpop.jkt } });
  });
});

describe('DPoP nonces at resources (RFC 9449 §9)', () => {
  it('DPOP-03 with nonces on, a proof without one → 401 use_dpop_nonce with DPoP-Nonce; with it → accepted', async () => {
    await start({ dpop: { nonces: { secret: 'a shared secret of at least 32 characters!' } } });
    // The token request needs a nonce too: the first answer hands it out.
    const client = await h.register();
    const { code, pkce } = await h.obtainCode(client);
    const params = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirect_uris[0],
      client_id: client.client_id,
      code_verifier: pkce.verifier,
    };
    const first = await h.token(params, { dpop: await dpop.proof('POST', TOKEN_URL) });
    const nonce = String(first.headers['dpop-nonce']);
    const tokens = await h.token(params, { dpop: await dpop.proof('POST', TOKEN_URL, { nonce }) });
    const access = String(json(tokens).access_token);
    const r = refused(
      await guard.check(dpopRequest(access, await dpop.proof('GET', API_URL, { accessToken: access }))),
    );
    expect(r).toMatchObject({ status: 401, code: 'use_dpop_nonce' });
    expect(r.nonce).toBeDefined();
    const ok = await guard.check(
      dpopRequest(access, await dpop.proof('GET', API_URL, { accessToken: access, nonce: String(r.nonce) })),
    );
    expect(ok.ok).toBe(true);
  });
});

describe('verifiers report the binding (RFC 9449 §6)', () => {
  it('jwksVerifier reads cnf.jkt, and refuses a token confirmed by anything else', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k', alg: 'ES256' };
    const now = Math.floor(Date.now() / 1000);
    const mint = (cnf: Record<string, unknown>) =>
      new SignJWT({ client_id: 'c', scope: 'a', cnf })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'k' })
        .setIssuer('https://as.example')
        .setSubject('u')
        .setAudience('https://api.example')
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .setJti(crypto.randomUUID())
        .sign(privateKey);
    const verifier = jwksVerifier({ issuer: 'https://as.example', jwks: { keys: [jwk] } });
    expect((await verifier.verify(await mint({ jkt: 'abc' })))?.dpopJkt).toBe('abc');
    expect(await verifier.verify(await mint({ 'x5t#S256': 'abc' }))).toBeNull();
  });
});
