/**
 * DPoP at the token endpoint (RFC 9449 §5; DPOP-01, DPOP-02): proofs checked against the token
 * request, tokens bound to the proof's key, public clients' refresh tokens bound too, the
 * `dpop_bound_access_tokens` client metadata, server nonces, and the attacks on each.
 */
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryReplayStore } from '../../src/protocol/replay-store.js';
import { memoryStorage } from '../../src/storage/memory.js';
import { type DpopTestClient, dpopClient } from '../helpers/dpop.js';
import { CB, Harness, type HarnessOptions, ISSUER, json, type RegisteredClient } from '../helpers/harness.js';
import type { TestResponse } from '../helpers/transports.js';
import { hmacSigned, unsigned } from '../protocol/key-fixtures.js';

const TOKEN_URL = `${ISSUER}/api/oauth/token`;

let h: Harness;
afterEach(() => h.close());

async function start(options: HarnessOptions['options'] = {}) {
  h = await Harness.start({ options });
  return h;
}

function expectError(response: TestResponse, error: string, status = 400) {
  expect(response.status, response.body).toBe(status);
  expect(json(response).error).toBe(error);
}

/** A code exchange with `proof` in the DPoP header (none when undefined). */
async function exchangeWith(client: RegisteredClient, proof: string | string[] | undefined) {
  const { code, pkce } = await h.obtainCode(client);
  const params = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirect_uris[0],
    client_id: client.client_id,
    code_verifier: pkce.verifier,
    client_secret: client.client_secret,
  };
  return { response: await h.token(params, proof === undefined ? {} : { dpop: proof }), params };
}

function refreshWith(client: RegisteredClient, refreshToken: string, proof: string | undefined) {
  return h.token(
    {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.client_id,
      client_secret: client.client_secret,
    },
    proof === undefined ? {} : { dpop: proof },
  );
}

async function boundTokens(dpop: DpopTestClient, metadata: Record<string, unknown> = {}) {
  const client = await h.register(metadata);
  const { response } = await exchangeWith(client, await dpop.proof('POST', TOKEN_URL));
  expect(response.status, response.body).toBe(200);
  return { client, body: json(response) };
}

describe('DPoP token requests (RFC 9449 §5)', () => {
  it('DPOP-02 a code exchange with a proof answers token_type DPoP and an access token with cnf.jkt', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const { body } = await boundTokens(dpop);
    expect(body.token_type).toBe('DPoP');
    expect(decodeJwt(String(body.access_token)).cnf).toEqual({ jkt: dpop.jkt });
  });

  it('DPOP-02 without a proof the tokens stay bearer tokens, without cnf', async () => {
    await start();
    const client = await h.register();
    const { response } = await exchangeWith(client, undefined);
    expect(json(response).token_type).toBe('Bearer');
    expect(decodeJwt(String(json(response).access_token)).cnf).toBeUndefined();
  });

  it("DPOP-02 a public client's refresh token is bound to the key: a refresh with a proof by it works, and the successor stays bound", async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const { client, body } = await boundTokens(dpop);
    const first = await refreshWith(client, String(body.refresh_token), await dpop.proof('POST', TOKEN_URL));
    expect(first.status, first.body).toBe(200);
    expect(json(first).token_type).toBe('DPoP');
    expect(decodeJwt(String(json(first).access_token)).cnf).toEqual({ jkt: dpop.jkt });
    const successor = String(json(first).refresh_token);
    expectError(await refreshWith(client, successor, undefined), 'invalid_dpop_proof');
    const second = await refreshWith(client, successor, await dpop.proof('POST', TOKEN_URL));
    expect(second.status, second.body).toBe(200);
  });

  it('DPOP-02 a bound refresh token presented without a proof → invalid_dpop_proof, and the grant survives', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const { client, body } = await boundTokens(dpop);
    expectError(await refreshWith(client, String(body.refresh_token), undefined), 'invalid_dpop_proof');
    const legit = await refreshWith(client, String(body.refresh_token), await dpop.proof('POST', TOKEN_URL));
    expect(legit.status, legit.body).toBe(200);
  });

  it('DPOP-02 attack: a refresh token presented with a proof by another key → invalid_grant, and the grant survives', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const thief = await dpopClient(() => h.clock.now());
    const { client, body } = await boundTokens(dpop);
    expectError(
      await refreshWith(client, String(body.refresh_token), await thief.proof('POST', TOKEN_URL)),
      'invalid_grant',
    );
    const legit = await refreshWith(client, String(body.refresh_token), await dpop.proof('POST', TOKEN_URL));
    expect(legit.status, legit.body).toBe(200);
  });

  it("DPOP-02 a public client's unbound refresh token becomes bound to the key of its first refresh with a proof", async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const client = await h.register();
    const { response } = await exchangeWith(client, undefined);
    const refreshed = await refreshWith(
      client,
      String(json(response).refresh_token),
      await dpop.proof('POST', TOKEN_URL),
    );
    expect(json(refreshed).token_type).toBe('DPoP');
    const successor = String(json(refreshed).refresh_token);
    expectError(await refreshWith(client, successor, undefined), 'invalid_dpop_proof');
  });

  it("DPOP-02 a confidential client's refresh token is not bound (its secret binds it), its access tokens are", async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const { client, body } = await boundTokens(dpop, { token_endpoint_auth_method: 'client_secret_post' });
    expect(body.token_type).toBe('DPoP');
    const plain = await refreshWith(client, String(body.refresh_token), undefined);
    expect(plain.status, plain.body).toBe(200);
    expect(json(plain).token_type).toBe('Bearer');
  });

  it('DPOP-02 dpop_bound_access_tokens: the registration keeps it, and a token request without a proof → invalid_dpop_proof', async () => {
    await start();
    const client = await h.register({ dpop_bound_access_tokens: true });
    expect((client as unknown as Record<string, unknown>).dpop_bound_access_tokens).toBe(true);
    const { response } = await exchangeWith(client, undefined);
    expectError(response, 'invalid_dpop_proof');
    const dpop = await dpopClient(() => h.clock.now());
    const { response: bound } = await exchangeWith(client, await dpop.proof('POST', TOKEN_URL));
    expect(json(bound).token_type).toBe('DPoP');
  });

  it('DPOP-02 a configured client with dpopBoundAccessTokens must send a proof', async () => {
    await start({ clients: [{ clientId: 'agent', redirectUris: [CB], dpopBoundAccessTokens: true }] });
    const client = { client_id: 'agent', redirect_uris: [CB] } as RegisteredClient;
    expectError((await exchangeWith(client, undefined)).response, 'invalid_dpop_proof');
    const dpop = await dpopClient(() => h.clock.now());
    const { response } = await exchangeWith(client, await dpop.proof('POST', TOKEN_URL));
    expect(json(response).token_type).toBe('DPoP');
  });

  it('DPOP-02 dpop_bound_access_tokens must be a boolean', async () => {
    await start();
    const response = await h.send({
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'x',
        redirect_uris: ['http://127.0.0.1:49152/cb'],
        dpop_bound_access_tokens: 'yes',
      }),
    });
    expectError(response, 'invalid_client_metadata');
  });

  it('DPOP-01 the metadata advertises dpop_signing_alg_values_supported, as configured', async () => {
    await start({ dpop: { algorithms: ['ES256', 'EdDSA'] } });
    const metadata = json(await h.send({ method: 'GET', url: '/.well-known/oauth-authorization-server' }));
    expect(metadata.dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA']);
  });

  it('DPoP off: not advertised, and the DPoP header is ignored (bearer tokens)', async () => {
    await start({ dpop: { enabled: false } });
    const metadata = json(await h.send({ method: 'GET', url: '/.well-known/oauth-authorization-server' }));
    expect(metadata.dpop_signing_alg_values_supported).toBeUndefined();
    const dpop = await dpopClient(() => h.clock.now());
    const { response } = await exchangeWith(await h.register(), await dpop.proof('POST', TOKEN_URL));
    expect(json(response).token_type).toBe('Bearer');
  });
});

describe('DPoP proofs at the token endpoint: attacks (RFC 9449 §4.3, §11; DPOP-01)', () => {
  it('DPOP-01 attack: a proof replayed at the token endpoint → invalid_dpop_proof', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const client = await h.register();
    const proof = await dpop.proof('POST', TOKEN_URL);
    expect((await exchangeWith(client, proof)).response.status).toBe(200);
    expectError((await exchangeWith(client, proof)).response, 'invalid_dpop_proof');
  });

  it('DPOP-01 attack: a proof for another URL → invalid_dpop_proof, and the code stays redeemable', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const client = await h.register();
    const { response, params } = await exchangeWith(
      client,
      await dpop.proof('POST', `${ISSUER}/api/oauth/revoke`),
    );
    expectError(response, 'invalid_dpop_proof');
    const retry = await h.token(params, { dpop: await dpop.proof('POST', TOKEN_URL) });
    expect(retry.status, retry.body).toBe(200);
  });

  it('DPOP-01 htu is compared without query and fragment, after normalisation', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const proof = await dpop.proof('POST', 'HTTP://127.0.0.1:4000/api/oauth/token?x=1#f');
    expect((await exchangeWith(await h.register(), proof)).response.status).toBe(200);
  });

  it('DPOP-01 attack: a proof for another method → invalid_dpop_proof', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    expectError(
      (await exchangeWith(await h.register(), await dpop.proof('GET', TOKEN_URL))).response,
      'invalid_dpop_proof',
    );
  });

  it('DPOP-01 attack: a proof with a private key in its jwk → invalid_dpop_proof', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const proof = await dpop.proof('POST', TOKEN_URL, { header: { jwk: dpop.key.privateJwk } });
    expectError((await exchangeWith(await h.register(), proof)).response, 'invalid_dpop_proof');
  });

  it('DPOP-01 attack: alg none and HS256 proofs → invalid_dpop_proof', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const claims = { jti: crypto.randomUUID(), htm: 'POST', htu: TOKEN_URL, iat: h.clock.now() };
    const none = unsigned(claims, { alg: 'none', typ: 'dpop+jwt', jwk: dpop.key.publicJwk });
    expectError((await exchangeWith(await h.register(), none)).response, 'invalid_dpop_proof');
    const hs = await hmacSigned(new TextEncoder().encode(JSON.stringify(dpop.key.publicJwk)), claims, {
      typ: 'dpop+jwt',
      jwk: dpop.key.publicJwk,
    });
    expectError((await exchangeWith(await h.register(), hs)).response, 'invalid_dpop_proof');
  });

  it('DPOP-01 attack: a proof whose iat is out of the window (either way) → invalid_dpop_proof', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const old = await dpop.proof('POST', TOKEN_URL, { iat: h.clock.now() - 61 });
    expectError((await exchangeWith(await h.register(), old)).response, 'invalid_dpop_proof');
    const future = await dpop.proof('POST', TOKEN_URL, { iat: h.clock.now() + 61 });
    expectError((await exchangeWith(await h.register(), future)).response, 'invalid_dpop_proof');
  });

  it('DPOP-01 attack: two DPoP headers → invalid_dpop_proof', async () => {
    await start();
    const dpop = await dpopClient(() => h.clock.now());
    const proofs = [await dpop.proof('POST', TOKEN_URL), await dpop.proof('POST', TOKEN_URL)];
    expectError((await exchangeWith(await h.register(), proofs.join(', '))).response, 'invalid_dpop_proof');
  });
});

describe('the replay store (RFC 9449 §11.1)', () => {
  it("DPOP-01 proofs are recorded in the storage's replay store when it has one, shared by every instance", async () => {
    const keys: string[] = [];
    const shared = memoryReplayStore();
    const replay = {
      checkAndStore: (key: string, expiresAt: number, now: number) => {
        keys.push(key);
        return shared.checkAndStore(key, expiresAt, now);
      },
    };
    h = await Harness.start({ storage: Object.assign(memoryStorage(), { replay }) });
    const dpop = await dpopClient(() => h.clock.now());
    const proof = await dpop.proof('POST', TOKEN_URL);
    expect((await exchangeWith(await h.register(), proof)).response.status).toBe(200);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^dpop:[A-Za-z0-9_-]{43}$/);
    expectError((await exchangeWith(await h.register(), proof)).response, 'invalid_dpop_proof');
  });
});

describe('DPoP server nonces at the token endpoint (RFC 9449 §8)', () => {
  const nonces = { secret: 'a shared secret of at least 32 characters!' };

  it('DPOP-01 with nonces on, a proof without one → use_dpop_nonce with a DPoP-Nonce header; with it → 200 and a fresh nonce', async () => {
    await start({ dpop: { nonces } });
    const dpop = await dpopClient(() => h.clock.now());
    const client = await h.register();
    const { response, params } = await exchangeWith(client, await dpop.proof('POST', TOKEN_URL));
    expectError(response, 'use_dpop_nonce');
    const nonce = response.headers['dpop-nonce'];
    expect(nonce).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
    const retry = await h.token(params, {
      dpop: await dpop.proof('POST', TOKEN_URL, { nonce: String(nonce) }),
    });
    expect(retry.status, retry.body).toBe(200);
    expect(retry.headers['dpop-nonce']).toBeDefined();
  });

  it('DPOP-01 a nonce from another secret, or an expired one, → use_dpop_nonce', async () => {
    await start({ dpop: { nonces } });
    const dpop = await dpopClient(() => h.clock.now());
    const { response } = await exchangeWith(await h.register(), await dpop.proof('POST', TOKEN_URL));
    const nonce = String(response.headers['dpop-nonce']);
    h.clock.advance(2 * 300 + 1);
    const late = await exchangeWith(await h.register(), await dpop.proof('POST', TOKEN_URL, { nonce }));
    expectError(late.response, 'use_dpop_nonce');
  });
});
