/**
 * A small load of the reference server for the fault tests: registrations, code flows and refreshes
 * by a few concurrent workers, each step recorded only once its answer arrived in full (what the
 * server acknowledged), and each request in flight when the server died marked as such. No
 * assertions here: a request that fails (the server was killed) just ends its worker.
 */
import { createHash, randomBytes } from 'node:crypto';
import { at, cookieHeader, decodeHtml, hiddenFields, type Site } from '../helpers/school-flow.js';

export const REDIRECT_URI = 'http://127.0.0.1:49152/callback';
export const SCOPE = 'openid account:read';

/** A refresh-token chain as its client knows it. */
export interface Chain {
  readonly clientId: string;
  /** The newest refresh token the server acknowledged. */
  refreshToken: string;
  /** The access token acknowledged with it. */
  accessToken: string;
  /** A refresh of `refreshToken` was sent and not answered (the server died): it may have rotated. */
  inFlight: boolean;
}

/** An authorization code the server redirected with, not exchanged. */
export interface AckedCode {
  readonly clientId: string;
  readonly code: string;
  readonly verifier: string;
}

/** What the load saw acknowledged, and what was in flight. */
export interface LoadRecord {
  readonly clients: string[];
  readonly chains: Chain[];
  readonly codes: AckedCode[];
  /** Codes whose exchange was sent and not answered: redeemed or not, both are correct. */
  readonly codesInFlight: AckedCode[];
  /** Failures while the server was alive: any is a bug. */
  readonly errors: string[];
  operations: number;
}

/** An empty record. */
export const newRecord = (): LoadRecord => ({
  clients: [],
  chains: [],
  codes: [],
  codesInFlight: [],
  errors: [],
  operations: 0,
});

const form = (body: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(body),
});

export async function register(site: Site): Promise<string> {
  const response = await fetch(`${site.base}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Load client',
      application_type: 'native',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
    }),
  });
  const body = (await response.json()) as { client_id?: string };
  if (response.status !== 201 || body.client_id === undefined)
    throw new Error(`register: ${response.status}`);
  return body.client_id;
}

/** Authorize, consent page, Allow: the code of the redirect. */
export async function authorizeCode(site: Site, clientId: string, cookie: string): Promise<AckedCode> {
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const page = await fetch(at(site, `${site.issuer}/oauth/authorize?${query}`), {
    redirect: 'manual',
    headers: { cookie },
  });
  const consent = await page.text();
  const action = /<form method="post" action="([^"]+)">/.exec(consent)?.[1];
  if (page.status !== 200 || action === undefined) throw new Error(`consent page: ${page.status}`);
  const decided = await fetch(at(site, decodeHtml(action)), {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie,
      origin: new URL(site.issuer).origin,
    },
    body: new URLSearchParams({ ...hiddenFields(consent), decision: 'allow' }),
  });
  await decided.arrayBuffer();
  const code = new URL(decided.headers.get('location') ?? 'x:/').searchParams.get('code');
  if (decided.status !== 303 || code === null) throw new Error(`decision: ${decided.status}`);
  return { clientId, code, verifier };
}

/** The token endpoint: status and JSON body. */
export async function token(
  site: Site,
  body: Record<string, string>,
): Promise<{ status: number; body: Record<string, string> }> {
  const response = await fetch(`${site.base}/api/oauth/token`, form(body));
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

export const exchange = (site: Site, code: AckedCode) =>
  token(site, {
    grant_type: 'authorization_code',
    code: code.code,
    redirect_uri: REDIRECT_URI,
    client_id: code.clientId,
    code_verifier: code.verifier,
  });

export const refresh = (site: Site, clientId: string, refreshToken: string) =>
  token(site, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });

/** UserInfo with a bearer token: the status. */
export async function userinfo(site: Site, accessToken: string): Promise<number> {
  const response = await fetch(`${site.base}/api/oauth/userinfo`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  await response.arrayBuffer();
  return response.status;
}

/** Signs in through the login form; returns the session cookie. */
export async function signIn(site: Site, email: string, password: string): Promise<string> {
  const page = await fetch(`${site.base}/login`);
  const fields = hiddenFields(await page.text());
  const posted = await fetch(`${site.base}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: cookieHeader(page),
      origin: new URL(site.issuer).origin,
    },
    body: new URLSearchParams({ ...fields, email, password }),
  });
  await posted.arrayBuffer();
  const cookie = cookieHeader(posted, (name) => name.endsWith('cs_session'));
  if (posted.status !== 303 || cookie === '') throw new Error(`sign-in: ${posted.status}`);
  return cookie;
}

/** A new client with one code flow done: its refresh-token chain. */
export async function newChain(site: Site, cookie: string): Promise<Chain> {
  const clientId = await register(site);
  const answer = await exchange(site, await authorizeCode(site, clientId, cookie));
  if (answer.status !== 200) throw new Error(`exchange: ${answer.status}`);
  return {
    clientId,
    refreshToken: answer.body.refresh_token!,
    accessToken: answer.body.access_token!,
    inFlight: false,
  };
}

/**
 * Runs `workers` concurrent workers until `stop()` resolves or a request fails (the server died):
 * each registers a client, then alternates code flows (every third code left unexchanged) and
 * refreshes of its chains. Resolves once every worker has ended.
 */
export async function runLoad(
  site: Site,
  cookie: string,
  workers: number,
  record: LoadRecord,
  until: { stopped: boolean; readonly onOperation?: (count: number) => void },
): Promise<void> {
  const worker = async (w: number) => {
    try {
      const clientId = await register(site);
      record.clients.push(clientId);
      const mine: Chain[] = [];
      for (let step = 0; !until.stopped; step++) {
        if (step % 3 === 0 || mine.length === 0) {
          const code = await authorizeCode(site, clientId, cookie);
          if ((step + w) % 9 === 0) {
            record.codes.push(code);
            continue;
          }
          record.codesInFlight.push(code);
          const answer = await exchange(site, code);
          record.codesInFlight.splice(record.codesInFlight.indexOf(code), 1);
          if (answer.status !== 200)
            throw new Error(`exchange: ${answer.status} ${JSON.stringify(answer.body)}`);
          const chain: Chain = {
            clientId,
            refreshToken: answer.body.refresh_token!,
            accessToken: answer.body.access_token!,
            inFlight: false,
          };
          mine.push(chain);
          record.chains.push(chain);
        } else {
          const chain = mine[step % mine.length]!;
          chain.inFlight = true;
          const answer = await refresh(site, clientId, chain.refreshToken);
          if (answer.status !== 200)
            throw new Error(`refresh: ${answer.status} ${JSON.stringify(answer.body)}`);
          chain.refreshToken = answer.body.refresh_token!;
          chain.accessToken = answer.body.access_token!;
          chain.inFlight = false;
        }
        record.operations++;
        until.onOperation?.(record.operations);
      }
    } catch (error) {
      // The server died (connection refused or reset): the worker ends. Anything else is a
      // failure of the server while alive, reported through the record.
      if (!until.stopped) record.errors.push(error instanceof Error ? error.message : String(error));
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
}
