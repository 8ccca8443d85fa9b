/**
 * The authorization code flow against a running course-school server over plain HTTP, done the way
 * a browser and a client would: dynamic registration, the login form (its CSRF field and cookie),
 * the library's consent page and its decision POST, then the token endpoint. No browser needed.
 *
 * A {@link Site} separates the issuer (what URLs say) from the socket (where requests go), so the
 * same helpers talk to each of several instances sharing one issuer behind a load balancer.
 */

import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { parseBearerChallenge } from './challenge.js';

/** Where a server is: its issuer, and the base URL of the socket to send requests to. */
export interface Site {
  readonly issuer: string;
  readonly base: string;
}

/** The site of a server listening at `address` (`host:port`); the issuer defaults to that address. */
export function siteOf(server: { readonly issuer: string; readonly address: string }): Site {
  return { issuer: server.issuer, base: `http://${server.address}` };
}

/** A URL the server named (under its issuer), rewritten to reach this site's socket. */
export function at(site: Site, url: string): string {
  if (url.startsWith('/')) return `${site.base}${url}`;
  if (url === site.issuer || url.startsWith(`${site.issuer}/`) || url.startsWith(`${site.issuer}?`))
    return `${site.base}${url.slice(site.issuer.length)}`;
  throw new Error(`${url} is not a URL of ${site.issuer}`);
}

/** The demo accounts of the reference server. */
export const ADA = { email: 'ada@example.com', password: 'ada-lovelace' } as const;
export const GRACE = { email: 'grace@example.com', password: 'grace-hopper' } as const;
export type Credentials = { readonly email: string; readonly password: string };

/** A PKCE pair (RFC 7636, S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Decodes the character references an HTML attribute value may hold. */
export function decodeHtml(value: string): string {
  return value
    .replace(/&#(\d+);/g, (_m, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_m, code: string) => String.fromCodePoint(Number.parseInt(code, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The hidden fields of the (first) form of a page. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[decodeHtml(m[1]!)] = decodeHtml(m[2]!);
  return fields;
}

/** `name=value` of the cookies a response sets (non-empty ones), joined for a `Cookie` header. */
export function cookieHeader(response: Response, keep: (name: string) => boolean = () => true): string {
  return response.headers
    .getSetCookie()
    .map((header) => header.split(';', 1)[0]!)
    .filter((pair) => {
      const eq = pair.indexOf('=');
      return eq > 0 && eq < pair.length - 1 && keep(pair.slice(0, eq));
    })
    .join('; ');
}

/** Registers a public loopback client; returns its `client_id`. */
export async function registerClient(
  site: Site,
  redirectUri: string,
  metadata: Record<string, unknown> = {},
): Promise<string> {
  const response = await fetch(`${site.base}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'E2E test client',
      application_type: 'native',
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
      ...metadata,
    }),
  });
  const body = (await response.json()) as { client_id?: string };
  expect(response.status, JSON.stringify(body)).toBe(201);
  expect(body.client_id).toBeTypeOf('string');
  return body.client_id!;
}

/** Signs in through the login page; returns the session cookie (`name=value`). */
export async function signIn(
  site: Site,
  user: Credentials,
  loginUrl = `${site.issuer}/login`,
): Promise<string> {
  const form = await fetch(at(site, loginUrl));
  expect(form.status).toBe(200);
  const fields = hiddenFields(await form.text());
  const posted = await fetch(`${site.base}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: cookieHeader(form),
      origin: new URL(site.issuer).origin,
    },
    body: new URLSearchParams({ ...fields, email: user.email, password: user.password }),
  });
  expect(posted.status, await posted.clone().text()).toBe(303);
  const session = cookieHeader(posted, (name) => name.endsWith('cs_session'));
  expect(session).not.toBe('');
  return session;
}

/** What an authorization request asks for. */
export interface AuthorizationParams {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scope: string;
  readonly resource?: string;
  readonly state?: string;
}

/** The outcome of {@link authorize}. */
export interface Authorized {
  /** Where the browser was sent at the end (the client's redirect URI with `code` or `error`). */
  readonly callback: URL;
  readonly verifier: string;
  /** The session cookie, for further flows or the account page. */
  readonly cookie: string;
  /** The consent page as served. */
  readonly consent: string;
}

/**
 * The browser's part: opens the authorization URL, signs in when sent to the login page (unless a
 * session `cookie` is given), reads the consent page, and posts the decision.
 */
export async function authorize(
  site: Site,
  params: AuthorizationParams,
  user: Credentials | { readonly cookie: string },
  decision: 'allow' | 'deny' = 'allow',
): Promise<Authorized> {
  const { verifier, challenge } = pkcePair();
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: params.clientId,
    redirect_uri: params.redirectUri,
    scope: params.scope,
    state: params.state ?? randomBytes(8).toString('hex'),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...(params.resource === undefined ? {} : { resource: params.resource }),
  });
  const browsed = await browse(site, `${site.issuer}/oauth/authorize?${query}`, user, decision);
  return { ...browsed, verifier };
}

/**
 * What a person does with an authorization URL in a browser: open it, sign in when sent to the
 * login page (unless a session `cookie` is given), read the consent page and choose.
 */
export async function browse(
  site: Site,
  authorizationUrl: string,
  user: Credentials | { readonly cookie: string },
  decision: 'allow' | 'deny' = 'allow',
): Promise<Omit<Authorized, 'verifier'>> {
  let cookie = 'cookie' in user ? user.cookie : '';
  let page = await fetch(at(site, authorizationUrl), {
    redirect: 'manual',
    headers: cookie === '' ? {} : { cookie },
  });
  if (page.status === 303 && 'email' in user) {
    // Not signed in: the library sends the browser to the login page, which comes back here.
    const login = new URL(page.headers.get('location')!, site.issuer).href;
    expect(new URL(login).pathname).toBe('/login');
    cookie = await signIn(site, user, login);
    const returnTo = new URL(login).searchParams.get('return_to')!;
    page = await fetch(at(site, returnTo), { redirect: 'manual', headers: { cookie } });
  }
  const consent = await page.text();
  expect(page.status, consent.slice(0, 500)).toBe(200);
  const action = /<form method="post" action="([^"]+)">/.exec(consent)?.[1];
  expect(action).toBeDefined();
  const decided = await fetch(at(site, decodeHtml(action!)), {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie,
      origin: new URL(site.issuer).origin,
    },
    body: new URLSearchParams({ ...hiddenFields(consent), decision }),
  });
  expect(decided.status, await decided.clone().text()).toBe(303);
  return { callback: new URL(decided.headers.get('location')!), cookie, consent };
}

/** A token endpoint answer. */
export interface TokenSet {
  readonly access_token: string;
  readonly refresh_token: string;
  readonly id_token?: string;
  readonly scope: string;
  readonly token_type: string;
  readonly expires_in: number;
}

/** POSTs a form to the token endpoint. */
export function tokenRequest(site: Site, params: Record<string, string>): Promise<Response> {
  return fetch(`${site.base}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
}

/** Exchanges the code of an authorization; expects success. */
export async function exchangeCode(
  site: Site,
  clientId: string,
  redirectUri: string,
  authorized: Authorized,
): Promise<TokenSet> {
  const code = authorized.callback.searchParams.get('code');
  expect(code, authorized.callback.href).not.toBeNull();
  const response = await tokenRequest(site, {
    grant_type: 'authorization_code',
    code: code!,
    redirect_uri: redirectUri,
    client_id: clientId,
    code_verifier: authorized.verifier,
  });
  const body = (await response.json()) as TokenSet;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** Uses a refresh token; returns the raw response. */
export function refreshRequest(site: Site, clientId: string, refreshToken: string): Promise<Response> {
  return tokenRequest(site, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: clientId,
  });
}

/** Revokes a token at the revocation endpoint (RFC 7009); expects 200. */
export async function revokeToken(site: Site, clientId: string, token: string): Promise<void> {
  const response = await fetch(`${site.base}/api/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, client_id: clientId }),
  });
  expect(response.status).toBe(200);
}

/** Registers a client, runs the flow as `user` and exchanges the code. */
export async function obtainTokens(
  site: Site,
  options: {
    readonly scope: string;
    readonly user?: Credentials | { readonly cookie: string };
    readonly resource?: string;
    readonly clientName?: string;
  },
): Promise<{ clientId: string; redirectUri: string; tokens: TokenSet; authorized: Authorized }> {
  const redirectUri = 'http://127.0.0.1:49152/callback';
  const clientId = await registerClient(site, redirectUri, {
    client_name: options.clientName ?? 'E2E test client',
  });
  const authorized = await authorize(
    site,
    {
      clientId,
      redirectUri,
      scope: options.scope,
      ...(options.resource === undefined ? {} : { resource: options.resource }),
    },
    options.user ?? ADA,
  );
  const tokens = await exchangeCode(site, clientId, redirectUri, authorized);
  return { clientId, redirectUri, tokens, authorized };
}

/** Calls the business API (`/api/v1` + `path`) with a bearer token. */
export function api(site: Site, path: string, token?: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${site.base}/api/v1${path}`, {
    ...init,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(init.headers as Record<string, string> | undefined),
    },
  });
}

/** The parameters of a `WWW-Authenticate: Bearer ...` challenge. */
export function bearerChallenge(response: Response): Record<string, string> {
  const header = response.headers.get('www-authenticate') ?? '';
  expect(header).toMatch(/^Bearer( |,|$)/);
  // The Bearer challenge's parameters only: a DPoP challenge follows it (RFC 9449 §7.1).
  return { ...parseBearerChallenge(header).params };
}

/** The protected header of a JWS compact serialisation. */
export function jwsHeader(jws: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}
