/**
 * The workloads: what one operation is, and what each virtual user holds before the first one.
 * The same code drives ours and oidc-provider: endpoints come from each server's discovery
 * document, and the browser steps (login form, consent form, redirects) are followed as a browser
 * would, so each server is exercised through its own natural flow. Every response is validated: a
 * 4xx/5xx, a missing field or a wrong redirect fails the operation (an error, not an op).
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { CookieJar, expectStatus, HttpClient, jsonBody, location, OpError, readForm } from './http.mjs';

/** Where clients say the code goes; nothing listens there, the generator reads the redirect. */
const REDIRECT_URI = 'http://127.0.0.1:8765/callback';
/** What every authorization asks for, on both servers. */
const SCOPE = 'openid profile email courses:read';
/** A demo account of the reference server; oidc-provider and the guard server accept anyone. */
const CREDENTIALS = { email: 'ada@example.com', password: 'ada-lovelace' };

/**
 * @typedef {object} Endpoints
 * @property {string} issuer
 * @property {string} authorization - absolute URL
 * @property {string} token - path
 * @property {string} registration - path
 * @property {string} userinfo - path
 * @property {string} introspection - path
 */

/**
 * @typedef {object} Client
 * @property {string} client_id
 * @property {string} [client_secret]
 */

/**
 * @typedef {object} Tokens
 * @property {string} access_token
 * @property {string} refresh_token
 */

/**
 * @typedef {object} VirtualUser
 * @property {number} index
 * @property {CookieJar} jar - the user's browser: its session cookie after the login
 * @property {Tokens} [tokens] - the newest tokens of the user's own refresh-token chain
 */

/**
 * @typedef {object} Context
 * @property {HttpClient} http
 * @property {Endpoints} endpoints
 * @property {Client} client
 * @property {VirtualUser[]} users
 */

/**
 * @typedef {object} Workload
 * @property {string} description
 * @property {(ctx: Context) => Promise<void>} setup - runs once per server, before the windows
 * @property {(ctx: Context, user: VirtualUser) => Promise<void>} op - one operation; throws OpError when invalid
 * @property {(ctx: Context, user: VirtualUser) => Promise<void>} [recover] - after an error, restores the user's state
 */

/** @param {HttpClient} http @param {string} url */
function pathOf(http, url) {
  const u = new URL(url);
  if (u.origin !== http.origin) throw new OpError(`${url} is not on ${http.origin}`);
  return u.pathname + u.search;
}

/**
 * Reads the endpoints from the server's OpenID discovery document.
 * @param {HttpClient} http
 * @returns {Promise<Endpoints>}
 */
async function discover(http) {
  const response = await http.request('GET', '/.well-known/openid-configuration');
  expectStatus(response, 200, 'discovery');
  const d = jsonBody(response, 'discovery');
  /** @param {string} key */
  const url = (key) => {
    const value = d[key];
    if (typeof value !== 'string') throw new OpError(`discovery: no ${key}`);
    return value;
  };
  return {
    issuer: url('issuer'),
    authorization: url('authorization_endpoint'),
    token: pathOf(http, url('token_endpoint')),
    registration: pathOf(http, url('registration_endpoint')),
    userinfo: pathOf(http, url('userinfo_endpoint')),
    introspection: pathOf(http, url('introspection_endpoint')),
  };
}

/**
 * One dynamic registration (RFC 7591): a native loopback client, public unless `confidential`.
 * @param {HttpClient} http
 * @param {Endpoints} endpoints
 * @param {boolean} [confidential] - `client_secret_post`, which both servers accept at introspection
 * @returns {Promise<Client>}
 */
async function register(http, endpoints, confidential = false) {
  const response = await http.request('POST', endpoints.registration, {
    json: {
      client_name: 'Benchmark client',
      application_type: 'native',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: confidential ? 'client_secret_post' : 'none',
    },
  });
  expectStatus(response, 201, 'register');
  const body = jsonBody(response, 'register');
  if (typeof body.client_id !== 'string') throw new OpError('register: no client_id');
  if (confidential && typeof body.client_secret !== 'string') throw new OpError('register: no client_secret');
  return /** @type {Client} */ ({ client_id: body.client_id, client_secret: body.client_secret });
}

/** @param {Client} client @returns {Record<string, string>} */
function clientAuth(client) {
  return client.client_secret === undefined
    ? { client_id: client.client_id }
    : { client_id: client.client_id, client_secret: client.client_secret };
}

/**
 * The browser part of the code flow: authorize, then whatever pages the server shows (a login
 * form only when there is no session yet; the consent page, answered Allow), following redirects
 * until the one to the client's redirect URI. Returns the code after checking `state` and `iss`.
 * @param {Context} ctx
 * @param {VirtualUser} user
 * @param {string} challenge - PKCE S256 challenge
 * @returns {Promise<string>}
 */
async function authorize(ctx, user, challenge) {
  const { http, endpoints, client } = ctx;
  const state = randomBytes(12).toString('base64url');
  let url = new URL(endpoints.authorization);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    // Ask for consent every time, on both servers: the op includes the consent page and Allow.
    prompt: 'consent',
  }).toString();
  /** @type {'GET' | 'POST'} */
  let method = 'GET';
  /** @type {Record<string, string> | undefined} */
  let form;
  for (let step = 0; step < 12; step++) {
    if (url.origin !== http.origin) {
      if (url.href.split('?')[0] !== REDIRECT_URI) throw new OpError(`authorize: redirected to ${url.href}`);
      const error = url.searchParams.get('error');
      if (error !== null)
        throw new OpError(`authorize: ${error}: ${url.searchParams.get('error_description')}`);
      const code = url.searchParams.get('code');
      if (code === null) throw new OpError('authorize: no code');
      if (url.searchParams.get('state') !== state) throw new OpError('authorize: state mismatch');
      if (url.searchParams.get('iss') !== endpoints.issuer) throw new OpError('authorize: iss mismatch');
      return code;
    }
    const response = await http.request(method, url.pathname + url.search, {
      jar: user.jar,
      // A browser posting a form sends its Origin; the reference server's pages refuse a
      // cross-site (or origin-less) form post (CSRF middleware).
      ...(form === undefined ? {} : { form, headers: { origin: http.origin } }),
    });
    if (response.status >= 300 && response.status < 400) {
      url = location(response, url.href);
      method = 'GET';
      form = undefined;
      continue;
    }
    expectStatus(response, 200, `${method} ${url.pathname}`);
    const page = readForm(response.text, url.href);
    if (page === undefined) throw new OpError(`${method} ${url.pathname}: a page without a form`);
    url = new URL(page.action);
    method = 'POST';
    form = page.password ? { ...page.fields, ...CREDENTIALS } : { ...page.fields, decision: 'allow' };
  }
  throw new OpError('authorize: more than 12 steps');
}

/**
 * The whole code flow without the login: authorize, consent, Allow, code, token exchange with PKCE.
 * @param {Context} ctx
 * @param {VirtualUser} user
 * @returns {Promise<Tokens>}
 */
async function codeFlow(ctx, user) {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const code = await authorize(ctx, user, challenge);
  const response = await ctx.http.request('POST', ctx.endpoints.token, {
    form: {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
      ...clientAuth(ctx.client),
    },
  });
  expectStatus(response, 200, 'token (code)');
  const body = jsonBody(response, 'token (code)');
  for (const field of ['access_token', 'refresh_token', 'id_token']) {
    if (typeof body[field] !== 'string') throw new OpError(`token (code): no ${field}`);
  }
  return /** @type {Tokens} */ (/** @type {unknown} */ (body));
}

/**
 * Discovers, registers the client, and signs every virtual user in (one code flow each, which
 * passes through the login form), keeping each user's cookies and first tokens.
 * @param {Context} ctx
 * @param {{ confidential?: boolean }} [options]
 */
async function signedInUsers(ctx, options = {}) {
  ctx.endpoints = await discover(ctx.http);
  ctx.client = await register(ctx.http, ctx.endpoints, options.confidential ?? false);
  // One at a time: the login is not measured and need not stress anything.
  for (const user of ctx.users) user.tokens = await codeFlow(ctx, user);
}

/**
 * A GET with the user's bearer token that must answer 200 JSON.
 * @param {Context} ctx
 * @param {VirtualUser} user
 * @param {string} path
 */
async function bearerGet(ctx, user, path) {
  const response = await ctx.http.request('GET', path, {
    headers: { authorization: `Bearer ${user.tokens?.access_token}` },
  });
  expectStatus(response, 200, `GET ${path}`);
  return jsonBody(response, `GET ${path}`);
}

/**
 * The signatures an operation of each workload must make, whatever the server: an access token
 * is an ES256 JWT, an ID token an RS256 JWT (the algorithm every OpenID client must accept).
 * @type {Record<string, { es256: number, rs256: number }>}
 */
export const SIGNATURES = {
  register: { es256: 0, rs256: 0 },
  'code-flow': { es256: 1, rs256: 1 },
  refresh: { es256: 1, rs256: 0 },
  userinfo: { es256: 0, rs256: 0 },
  introspect: { es256: 0, rs256: 0 },
};

/** @type {Record<string, Workload>} */
export const WORKLOADS = {
  floor: {
    description: 'GET / of a bare node:http server answering a small JSON body',
    async setup() {},
    async op(ctx) {
      const response = await ctx.http.request('GET', '/');
      expectStatus(response, 200, 'GET /');
      if (jsonBody(response, 'GET /').ok !== true) throw new OpError('GET /: unexpected body');
    },
  },
  register: {
    description: 'one dynamic client registration (RFC 7591)',
    async setup(ctx) {
      ctx.endpoints = await discover(ctx.http);
    },
    async op(ctx) {
      await register(ctx.http, ctx.endpoints);
    },
  },
  'code-flow': {
    description: 'authorize, consent page, Allow, code, token exchange with PKCE (signed-in user)',
    setup: (ctx) => signedInUsers(ctx),
    async op(ctx, user) {
      await codeFlow(ctx, user);
    },
  },
  refresh: {
    description: 'one refresh-token grant with rotation, keeping the newest token',
    setup: (ctx) => signedInUsers(ctx),
    async op(ctx, user) {
      const previous = user.tokens?.refresh_token ?? '';
      const response = await ctx.http.request('POST', ctx.endpoints.token, {
        form: { grant_type: 'refresh_token', refresh_token: previous, ...clientAuth(ctx.client) },
      });
      expectStatus(response, 200, 'token (refresh)');
      const body = jsonBody(response, 'token (refresh)');
      if (typeof body.access_token !== 'string') throw new OpError('token (refresh): no access_token');
      if (typeof body.refresh_token !== 'string' || body.refresh_token === previous)
        throw new OpError('token (refresh): the refresh token was not rotated');
      user.tokens = /** @type {Tokens} */ (/** @type {unknown} */ (body));
    },
    async recover(ctx, user) {
      user.tokens = await codeFlow(ctx, user);
    },
  },
  userinfo: {
    description: 'GET userinfo with a valid bearer token',
    setup: (ctx) => signedInUsers(ctx),
    async op(ctx, user) {
      const body = await bearerGet(ctx, user, ctx.endpoints.userinfo);
      if (typeof body.sub !== 'string' || typeof body.email !== 'string')
        throw new OpError('userinfo: no sub or email');
    },
  },
  introspect: {
    description:
      "one introspection (RFC 7662) of a valid access token by the token's own confidential client",
    setup: (ctx) => signedInUsers(ctx, { confidential: true }),
    async op(ctx, user) {
      const response = await ctx.http.request('POST', ctx.endpoints.introspection, {
        form: { token: user.tokens?.access_token ?? '', ...clientAuth(ctx.client) },
      });
      expectStatus(response, 200, 'introspect');
      const body = jsonBody(response, 'introspect');
      if (body.active !== true || body.client_id !== ctx.client.client_id)
        throw new OpError(`introspect: not active: ${response.text.slice(0, 200)}`);
    },
  },
  guard: {
    description: 'GET /api/x through the resource-server guard (token reused across requests)',
    setup: (ctx) => signedInUsers(ctx),
    async op(ctx, user) {
      const body = await bearerGet(ctx, user, '/api/x');
      if (body.ok !== true || typeof body.sub !== 'string') throw new OpError('guard: unexpected body');
    },
  },
  'guard-open': {
    description: 'GET /api/x-open: the same route and body, unguarded (the bearer header is still sent)',
    setup: (ctx) => signedInUsers(ctx),
    async op(ctx, user) {
      const body = await bearerGet(ctx, user, '/api/x-open');
      if (body.ok !== true || typeof body.sub !== 'string') throw new OpError('guard-open: unexpected body');
    },
  },
};

/**
 * A fresh context for a workload against one server.
 * @param {string} origin
 * @param {number} concurrency
 * @returns {Context}
 */
export function createContext(origin, concurrency) {
  return {
    http: new HttpClient(origin, concurrency),
    endpoints: /** @type {Endpoints} */ (/** @type {unknown} */ (undefined)),
    client: /** @type {Client} */ (/** @type {unknown} */ (undefined)),
    users: Array.from({ length: concurrency }, (_, index) => ({ index, jar: new CookieJar() })),
  };
}
