/**
 * Requests to the resource-side endpoints (UserInfo, revocation, introspection) as a client or a
 * resource server sends them, for tests that check how one token looks from each of them.
 */
import { expect } from 'vitest';
import type { IntrospectionCaller } from '../../src/options.js';
import { parseBearerChallenge } from './challenge.js';
import { form, Harness, type HarnessOptions, ISSUER, json, type RegisteredClient } from './harness.js';
import { TEST_KEYS } from './keys.js';
import { SPEC_PATHS } from './spec-paths.js';
import type { TestResponse } from './transports.js';

export const USERINFO = SPEC_PATHS.userinfo;
export const REVOKE = SPEC_PATHS.revocation;
export const INTROSPECT = SPEC_PATHS.introspection;

/** A resource server allowed to introspect tokens for both configured resources. */
export const RS_CALLER: IntrospectionCaller = {
  clientId: 'course-api',
  clientSecret: 'course-api-secret-0123456789abcdef',
  resources: [ISSUER, `${ISSUER}/mcp`],
};

/** A harness whose introspection endpoint accepts {@link RS_CALLER}, with the file's shared keys. */
export function harnessWithIntrospection(options: HarnessOptions = {}): Promise<Harness> {
  return Harness.start({
    ...options,
    options: { keys: TEST_KEYS, introspection: { callers: [RS_CALLER] }, ...options.options },
  });
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** GET UserInfo with `Authorization: Bearer <token>`. */
export function userinfo(h: Harness, token: string): Promise<TestResponse> {
  return h.send({ method: 'GET', url: USERINFO, headers: { authorization: `Bearer ${token}` } });
}

/** POST to the revocation endpoint with the client's own credentials (body), plus `extra`. */
export function revoke(
  h: Harness,
  client: RegisteredClient,
  token: string | undefined,
  extra: Record<string, string | undefined> = {},
): Promise<TestResponse> {
  return h.send({
    method: 'POST',
    url: REVOKE,
    headers: FORM,
    body: form({ token, client_id: client.client_id, client_secret: client.client_secret, ...extra }),
  });
}

/** POST to the introspection endpoint with the given credentials (default {@link RS_CALLER}). */
export function introspect(
  h: Harness,
  token: string | undefined,
  credentials: Record<string, string | undefined> = {
    client_id: RS_CALLER.clientId,
    client_secret: RS_CALLER.clientSecret,
  },
  extra: Record<string, string | undefined> = {},
): Promise<TestResponse> {
  return h.send({
    method: 'POST',
    url: INTROSPECT,
    headers: FORM,
    body: form({ token, ...credentials, ...extra }),
  });
}

/** Introspects as {@link RS_CALLER} and returns the parsed body, asserting nothing. */
export async function introspection(h: Harness, token: string): Promise<Record<string, unknown>> {
  return json(await introspect(h, token));
}

/** A client and the tokens it got from one code exchange. */
export interface Issued {
  client: RegisteredClient;
  access: string;
  refresh: string;
}

/** Registers a client (with `metadata`) and runs the code flow for `ada`. */
export async function issue(h: Harness, metadata: Record<string, unknown> = {}): Promise<Issued> {
  const { client, body } = await h.tokens(metadata);
  return { client, access: body.access_token as string, refresh: body.refresh_token as string };
}

/** A 401 with `error: invalid_token` in the body and in a well-formed Bearer challenge. */
export function expectInvalidToken(response: TestResponse): void {
  expect(response.status).toBe(401);
  expect(json(response).error).toBe('invalid_token');
  expect(parseBearerChallenge(response.headers['www-authenticate']).params.error).toBe('invalid_token');
}
