/**
 * A test harness: a server on memory storage with a controllable clock, a fake login (a `user`
 * cookie), and helpers that drive register → authorize → consent → token like a client and a
 * browser would. Every step returns the raw response so tests can assert on it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { defaultLogger, type LogFields, type Logger } from '../../src/core/context.js';
import type { AuthorizationServerEvent } from '../../src/core/events.js';
import type { OAuthRequest } from '../../src/core/http.js';
import type { AuthorizationServerOptions } from '../../src/options.js';
import { createScopePolicy } from '../../src/scopes/policy.js';
import { type AuthorizationServer, createAuthorizationServer } from '../../src/server.js';
import { memoryStorage } from '../../src/storage/memory.js';
import type { Storage } from '../../src/storage/types.js';
import { courseSchoolScopes } from '../fixtures/course-school-scopes.js';
import { SPEC_PATHS } from './spec-paths.js';
import { inProcess, type TestRequest, type TestResponse, type Transport } from './transports.js';

export const ISSUER = 'http://127.0.0.1:4000';
export const CB = 'http://127.0.0.1:49152/cb';
export const START = 1_800_000_000;

export interface TestClock {
  now(): number;
  /** Moves the clock forward by `seconds`. */
  advance(seconds: number): void;
}

export function testClock(startSeconds = START): TestClock & { ms: () => number } {
  let ms = startSeconds * 1000;
  return {
    now: () => Math.floor(ms / 1000),
    ms: () => ms,
    advance(seconds) {
      ms += seconds * 1000;
    },
  };
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function form(params: Record<string, string | undefined>): string {
  return Object.entries(params)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

export function json(response: TestResponse): Record<string, unknown> {
  return JSON.parse(response.body) as Record<string, unknown>;
}

/** Parses the query of a redirect `Location`. */
export function redirectParams(response: TestResponse): URLSearchParams {
  const location = response.headers.location;
  if (location === undefined)
    throw new Error(`expected a redirect, got ${response.status}: ${response.body.slice(0, 300)}`);
  return new URL(location).searchParams;
}

/** The hidden fields of the consent form. */
export function consentFields(page: TestResponse): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[m[1]!] = m[2]!
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>');
  }
  return fields;
}

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
}

export interface HarnessOptions {
  options?: Partial<AuthorizationServerOptions>;
  storage?: Storage;
}

/** A line the server logged. */
export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: LogFields | undefined;
}

export class Harness {
  readonly clock = testClock();
  readonly storage: Storage;
  readonly events: AuthorizationServerEvent[] = [];
  /**
   * What the server logged. Kept here rather than printed (every test server would otherwise
   * announce its open registration at start); errors are also written to standard error, where a
   * failing test's log shows them.
   */
  readonly logs: LogLine[] = [];
  /** The started server (set by {@link Harness.start}). */
  server!: AuthorizationServer;
  /** userId → epoch seconds of the last login. */
  readonly logins = new Map<string, number>();
  transport!: Transport;

  /**
   * Starts a server on memory storage (or `options.storage`) with the spec's paths, the
   * course-school scopes, the test clock and the fake login; `options.options` override any of it.
   */
  static async start(options: HarnessOptions = {}): Promise<Harness> {
    const h = new Harness(options);
    h.server = await createAuthorizationServer(h.#serverOptions(options.options));
    h.transport = inProcess(h.server);
    return h;
  }

  private constructor(options: HarnessOptions) {
    this.storage = options.storage ?? memoryStorage();
  }

  readonly #logger: Logger = {
    debug: (message, fields) => this.logs.push({ level: 'debug', message, fields }),
    info: (message, fields) => this.logs.push({ level: 'info', message, fields }),
    warn: (message, fields) => this.logs.push({ level: 'warn', message, fields }),
    error: (message, fields) => {
      this.logs.push({ level: 'error', message, fields });
      defaultLogger.error(message, fields);
    },
  };

  #serverOptions(overrides: Partial<AuthorizationServerOptions> = {}): AuthorizationServerOptions {
    const scopePolicy = overrides.scopePolicy ?? createScopePolicy({ registry: courseSchoolScopes });
    return {
      issuer: ISSUER,
      storage: this.storage,
      paths: SPEC_PATHS,
      scopePolicy,
      // As the reference server: the API uses every scope, the anonymous MCP catalog none.
      resources: [
        { resource: ISSUER, scopes: scopePolicy.supported },
        { resource: `${ISSUER}/mcp`, scopes: [] },
      ],
      clock: this.clock.ms,
      loginUrl: '/login',
      authenticate: (request: OAuthRequest) => {
        const cookie = request.headers.cookie ?? '';
        const m = /(?:^|;\s*)user=([^;]+)/.exec(cookie);
        if (m === null) return null;
        const id = decodeURIComponent(m[1]!);
        const authTime = this.logins.get(id);
        if (authTime === undefined) return null;
        const session = /(?:^|;\s*)session=([^;]+)/.exec(cookie);
        return { id, authTime, ...(session === null ? {} : { sessionId: session[1]! }) };
      },
      claims: (userId: string) => ({
        name: `User ${userId}`,
        given_name: 'User',
        family_name: userId,
        email: `${userId}@example.com`,
        email_verified: true,
        phone_number: '+1 555',
      }),
      onEvent: (event) => {
        this.events.push(event);
      },
      housekeepingIntervalSeconds: 0,
      logger: this.#logger,
      ...overrides,
    };
  }

  send(request: TestRequest): Promise<TestResponse> {
    return this.transport.send(request);
  }

  login(userId: string): string {
    this.logins.set(userId, this.clock.now());
    return `user=${encodeURIComponent(userId)}`;
  }

  async register(metadata: Record<string, unknown> = {}): Promise<RegisteredClient> {
    const response = await this.send({
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Test CLI', redirect_uris: [CB], ...metadata }),
    });
    if (response.status !== 201) throw new Error(`registration failed: ${response.status} ${response.body}`);
    return json(response) as unknown as RegisteredClient;
  }

  /** Introspects `token` as `client`, with its secret in the body (`client_secret_post`). */
  introspect(client: RegisteredClient, token: string): Promise<TestResponse> {
    return this.send({
      method: 'POST',
      url: '/api/oauth/introspect',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ token, client_id: client.client_id, client_secret: client.client_secret ?? '' }),
    });
  }

  authorizeUrl(client: RegisteredClient, p: Pkce, extra: Record<string, string | undefined> = {}): string {
    return `/oauth/authorize?${form({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0],
      scope: 'openid profile email courses:read',
      state: 'st-123',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      ...extra,
    })}`;
  }

  authorize(url: string, cookie?: string): Promise<TestResponse> {
    return this.send({ method: 'GET', url, headers: cookie === undefined ? {} : { cookie } });
  }

  decide(
    fields: Record<string, string>,
    decision: 'allow' | 'deny',
    cookie: string,
    headers: Record<string, string> = {},
  ) {
    return this.send({
      method: 'POST',
      url: '/oauth/authorize/decision',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: ISSUER, ...headers },
      body: form({ ...fields, decision }),
    });
  }

  /** Runs the browser part for `userId` and returns the code redirect's parameters. */
  async obtainCode(
    client: RegisteredClient,
    options: { pkce?: Pkce; extra?: Record<string, string | undefined>; user?: string } = {},
  ): Promise<{ code: string; params: URLSearchParams; pkce: Pkce; redirectUri: string }> {
    const p = options.pkce ?? pkce();
    const cookie = this.login(options.user ?? 'ada');
    const page = await this.authorize(this.authorizeUrl(client, p, options.extra), cookie);
    let result = page;
    if (page.status === 200) result = await this.decide(consentFields(page), 'allow', cookie);
    const params = redirectParams(result);
    const code = params.get('code');
    if (code === null) throw new Error(`no code: ${result.headers.location}`);
    return { code, params, pkce: p, redirectUri: options.extra?.redirect_uri ?? client.redirect_uris[0]! };
  }

  token(params: Record<string, string | undefined>, headers: Record<string, string | string[]> = {}) {
    return this.send({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: form(params),
    });
  }

  exchange(client: RegisteredClient, code: string, p: Pkce, extra: Record<string, string | undefined> = {}) {
    return this.token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirect_uris[0],
      client_id: client.client_id,
      code_verifier: p.verifier,
      client_secret: client.client_secret,
      ...extra,
    });
  }

  refresh(client: RegisteredClient, refreshToken: string, extra: Record<string, string | undefined> = {}) {
    return this.token({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.client_id,
      client_secret: client.client_secret,
      ...extra,
    });
  }

  /** Registers a client and returns a fresh token response body. */
  async tokens(metadata: Record<string, unknown> = {}, extra: Record<string, string | undefined> = {}) {
    const client = await this.register(metadata);
    const { code, pkce: p } = await this.obtainCode(client, { extra });
    const response = await this.exchange(client, code, p);
    if (response.status !== 200) throw new Error(`token failed: ${response.body}`);
    return { client, body: json(response) };
  }

  async close(): Promise<void> {
    await this.transport.close();
    await this.server.close();
  }
}
