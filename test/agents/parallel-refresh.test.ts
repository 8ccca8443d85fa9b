/**
 * Hosts refresh in parallel: when an agent's access token expires, each of its processes (sub-agents,
 * editor windows, tool servers) that holds the same refresh token refreshes, in a burst that can
 * last tens of seconds. Here: ten refreshes with the same token after the access token expired,
 * spread over 60 s, on the test clock.
 *
 * Decided (docs/mcp.md, "Parallel refreshes"): rotation with reuse detection is what MCP asks of
 * public clients (MCP authorization › Token Theft; OAuth 2.1 §4.3.1; RFC 9700 §4.14.2: a
 * rotated token presented again revokes the grant, since the server cannot tell the client from
 * a thief). The grace window is an exception for concurrency, which no specification defines;
 * CONFORMANCE §14 asks to keep it to a few seconds and to answer with the same successor, never a
 * new branch. So: within `refreshGraceSeconds` (10 s by default) of the rotation, every refresh
 * with the old token gets the same successor; after it, the old token is reuse, and the grant
 * ends. A host whose bursts last longer shares the rotated token among its processes, or its
 * operator raises the window (at most 60 s), accepting that a stolen token replayed within it
 * yields tokens instead of a revocation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Harness, json, type RegisteredClient } from '../helpers/harness.js';

/** Seconds after the first refresh at which each of the ten is sent: three at once, then spread. */
const BURST = [0, 0, 0, 3, 6, 9, 20, 35, 48, 59];

let h: Harness;
afterEach(() => h.close());

/** A public agent with tokens, whose access token has just expired. */
async function agentAfterExpiry(grace?: number) {
  h = await Harness.start(grace === undefined ? {} : { options: { tokens: { refreshGraceSeconds: grace } } });
  const { client, body } = await h.tokens({
    client_name: 'Claude Code (school)',
    redirect_uris: ['http://localhost:54107/callback'],
    token_endpoint_auth_method: 'none',
  });
  h.clock.advance(body.expires_in as number);
  return { client, refreshToken: body.refresh_token as string };
}

/** Sends the burst: each refresh at its offset from the first; returns the responses in order. */
async function burst(client: RegisteredClient, refreshToken: string) {
  const results = [];
  let at = 0;
  for (const offset of new Set(BURST)) {
    h.clock.advance(offset - at);
    at = offset;
    const together = BURST.filter((o) => o === offset).length;
    results.push(
      ...(await Promise.all(Array.from({ length: together }, () => h.refresh(client, refreshToken)))),
    );
  }
  return results.map((r) => ({ status: r.status, body: json(r) }));
}

/** UserInfo with `accessToken`: 200 while its grant lives, 401 once revoked. */
async function userinfoStatus(accessToken: string): Promise<number> {
  const response = await h.send({
    method: 'GET',
    url: '/api/oauth/userinfo',
    headers: { authorization: `Bearer ${accessToken}` },
  });
  return response.status;
}

describe('ten refreshes of one token after expiry, spread over 60 s', () => {
  it('with the default 10 s window: those within it get the same successor; the first after it is reuse and ends the grant (RT-02)', async () => {
    const { client, refreshToken } = await agentAfterExpiry();
    const results = await burst(client, refreshToken);

    const within = results.slice(0, 6); // sent at 0, 0, 0, 3, 6 and 9 s
    expect(within.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const successors = new Set(within.map((r) => r.body.refresh_token));
    expect(successors.size).toBe(1);
    expect(successors.has(refreshToken)).toBe(false);
    // Exactly one rotation; each caller a fresh access token of its own.
    expect(h.events.filter((e) => e.type === 'refresh.rotated')).toHaveLength(1);
    expect(new Set(within.map((r) => r.body.access_token)).size).toBe(6);

    const after = results.slice(6); // 20, 35, 48, 59 s
    expect(after.map((r) => [r.status, r.body.error])).toEqual(
      Array.from({ length: 4 }, () => [400, 'invalid_grant']),
    );
    expect(h.events.filter((e) => e.type === 'refresh.reuse_detected')).toHaveLength(1);
    // The grant is gone: the successor, and the access tokens handed out in the window.
    const successor = [...successors][0] as string;
    expect(json(await h.refresh(client, successor)).error).toBe('invalid_grant');
    expect(await userinfoStatus(within[0]!.body.access_token as string)).toBe(401);
  });

  it('with refreshGraceSeconds: 60, the whole burst gets the same successor and the grant lives on', async () => {
    const { client, refreshToken } = await agentAfterExpiry(60);
    const results = await burst(client, refreshToken);
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 10 }, () => 200));
    const successors = new Set(results.map((r) => r.body.refresh_token));
    expect(successors.size).toBe(1);
    expect(h.events.filter((e) => e.type === 'refresh.rotated')).toHaveLength(1);
    expect(h.events.some((e) => e.type === 'refresh.reuse_detected')).toBe(false);

    expect(await userinfoStatus(results[9]!.body.access_token as string)).toBe(200);
    // The old token, 60 s after its rotation, is reuse: the grant ends.
    const successor = [...successors][0] as string;
    h.clock.advance(1);
    expect(json(await h.refresh(client, refreshToken)).error).toBe('invalid_grant');
    expect(json(await h.refresh(client, successor)).error).toBe('invalid_grant');
    expect(await userinfoStatus(results[9]!.body.access_token as string)).toBe(401);
  });

  it('a host that shares the rotated token among its processes keeps its grant with the default window', async () => {
    const { client, refreshToken } = await agentAfterExpiry();
    // The first process rotates and stores the successor; the others read it before refreshing.
    let shared = refreshToken;
    for (const wait of [0, 20, 20, 19]) {
      h.clock.advance(wait);
      const response = await h.refresh(client, shared);
      expect(response.status, response.body).toBe(200);
      shared = json(response).refresh_token as string;
    }
    expect(h.events.some((e) => e.type === 'refresh.reuse_detected')).toBe(false);
  });
});
