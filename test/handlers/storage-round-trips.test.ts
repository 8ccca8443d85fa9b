/**
 * Which storage calls each step of a flow makes. On PostgreSQL every call is one statement, one
 * round trip to the database (and its CPU), so these lists are a budget: a change that adds a call
 * fails here and has to be deliberate. docs/storage.md lists the same per step. Client reads are
 * absent: a running server serves them from its client cache (`clientCacheSeconds`).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  consentFields,
  Harness,
  json,
  pkce,
  type RegisteredClient,
  redirectParams,
} from '../helpers/harness.js';
import { recordingStorage } from '../helpers/recording-storage.js';

describe('storage round trips per step of a flow', () => {
  let h: Harness;
  let calls: string[];
  let client: RegisteredClient;

  beforeEach(async () => {
    const recording = recordingStorage();
    calls = recording.calls;
    h = await Harness.start({ storage: recording.storage });
    client = await h.register({ grant_types: ['authorization_code', 'refresh_token'] });
    // One whole flow first, as a running server has had: the first uses read the client and the
    // new signing keys, and the first exchange clears the registration's expiry.
    const first = await h.obtainCode(client);
    calls.length = 0;
    const tokens = json(await h.exchange(client, first.code, first.pkce));
    // The first exchange of a new registration adds one best-effort write after the commit point
    // (and this new server's first signature re-reads the keys it generated).
    expect(calls).toEqual(['keys.list', 'codes.redeem', 'clients.clearExpiry']);
    expect((await h.refresh(client, String(tokens.refresh_token))).status).toBe(200);
    calls.length = 0;
  });
  afterEach(() => h.close());

  /** The calls `step` makes, and nothing before it. */
  async function during<T>(step: () => Promise<T>): Promise<{ result: T; made: string[] }> {
    calls.length = 0;
    const result = await step();
    return { result, made: [...calls] };
  }

  it('a code flow with prompt=consent: every call of each step, from the consent page to the first refresh', async () => {
    const p = pkce();
    const cookie = h.login('ada');
    const page = await during(() => h.authorize(h.authorizeUrl(client, p, { prompt: 'consent' }), cookie));
    expect(page.result.status).toBe(200);
    // prompt=consent asks whatever was remembered: the remembered consent is not read.
    expect(page.made).toEqual(['interactions.create']);

    const allow = await during(() => h.decide(consentFields(page.result), 'allow', cookie));
    expect(allow.result.status).toBe(303);
    // One atomic step that checks the form's binding (user, session, CSRF token), consumes the
    // pending authorization, stores the code and grows the remembered consent. The request is the
    // one this server stored with the consent page (grants/recently-issued.ts); a form answered on
    // another instance reads it first (recently-issued.test.ts).
    expect(allow.made).toEqual(['interactions.complete']);

    // The exchange: one atomic redemption. The code was issued by this server, which remembers its
    // record (bindings, PKCE challenge: grants/recently-issued.ts); the redemption decides whether
    // it is still unused and unexpired.
    const code = redirectParams(allow.result).get('code') ?? '';
    const exchange = await during(() => h.exchange(client, code, p));
    expect(exchange.result.status).toBe(200);
    expect(exchange.made).toEqual(['codes.redeem']);

    // The refresh: one atomic rotation. The token was issued by this server, which remembers its
    // record (grants/recently-issued.ts); the rotation decides whether it is still active.
    const refreshToken = String(json(exchange.result).refresh_token);
    const refresh = await during(() => h.refresh(client, refreshToken));
    expect(refresh.result.status).toBe(200);
    expect(refresh.made).toEqual(['grants.rotateRefreshToken']);

    // A retry within the grace window: read the token (a record is remembered for one use only),
    // store the new access token.
    const retry = await during(() => h.refresh(client, refreshToken));
    expect(retry.result.status).toBe(200);
    expect(retry.made).toEqual(['grants.getRefreshToken', 'grants.addAccessToken']);
  });

  it('without prompt=consent the consent page reads the remembered consent once', async () => {
    const page = await during(() => h.authorize(h.authorizeUrl(client, pkce()), h.login('ada')));
    expect(page.result.status).toBe(200);
    expect(page.made).toEqual(['consents.get', 'interactions.create']);
  });
});
