/**
 * The library's configuration for the course school: the spec's endpoint paths, the 38 scopes with
 * a per-role `grantable` rule, the session cookie as `authenticate`, our login page as `loginUrl`,
 * claims from our users, the two protected resources (the API and `/mcp`), Client ID Metadata
 * Documents, and the client address behind trusted proxies for the library's limits.
 * @module
 */
import {
  type AuthorizationServer,
  type AuthorizationServerOptions,
  type ClientAddressResolver,
  createAuthorizationServer,
  createScopePolicy,
  type EndpointPaths,
  type Storage,
} from 'portcullis';
import { createMemoryRateLimiter } from 'portcullis/rate-limit';
import type { SessionManager } from './accounts/sessions.js';
import { grantableScopes } from './api/route-table.js';
import type { DataStore } from './data/store.js';
import type { RegistrationRules } from './docs/auth-md.js';
import { LOGIN_PATH } from './pages/login.js';
import { courseSchoolScopes, SCOPE_NAMES } from './scopes.js';

/** The endpoint paths of the spec (§5): the API's under `/api/oauth`, the browser's under `/oauth`. */
export const OAUTH_PATHS: EndpointPaths = {
  authorization: '/oauth/authorize',
  authorizationDecision: '/oauth/authorize/decision',
  token: '/api/oauth/token',
  registration: '/api/oauth/register',
  userinfo: '/api/oauth/userinfo',
  revocation: '/api/oauth/revoke',
  introspection: '/api/oauth/introspect',
  jwks: '/.well-known/jwks.json',
};

/** What the authorization server is built from. */
export interface OAuthDeps {
  readonly issuer: string;
  readonly storage: Storage;
  readonly data: DataStore;
  readonly sessions: SessionManager;
  readonly title: string;
  /** Apply the library's default rate limits (per IP, per client) on the OAuth endpoints. */
  readonly rateLimit: boolean;
  /** Tokens begin with the time they were made (the library's `tokens.timeInTokens`). */
  readonly timeInTokens: boolean;
  /** The client address behind the trusted proxies: the library's limits count what ours count. */
  readonly clients: ClientAddressResolver;
  /** Host names besides the issuer's the server answers for (`ALLOWED_HOSTS`). */
  readonly allowedHosts: readonly string[];
  /** The signing keys' options (their wrapping, `KEY_WRAPPING_SECRET`): see key-wrapping.ts. */
  readonly keys: AuthorizationServerOptions['keys'];
}

/** The server and the facts the generated documents repeat. */
export interface CourseSchoolOAuth {
  readonly oauth: AuthorizationServer;
  readonly registration: RegistrationRules;
  /** The scopes a role may grant. */
  grantable(role: 'owner' | 'student'): ReadonlySet<string>;
}

/**
 * The scopes of `/mcp`, as its metadata lists them: the reads of the catalog its tools show
 * (courses with their outline, membership plans), the scopes the API's public catalog routes take.
 * Its tools need no sign-in, so these are what a client that signs in anyway asks for; never the
 * school's administration or write scopes.
 */
export const MCP_SCOPES: readonly string[] = ['courses:read', 'membership_plans:read'];

/**
 * Creates and starts the authorization server of the course school: the one place the library is
 * created.
 */
export async function createCourseSchoolOAuth(deps: OAuthDeps): Promise<CourseSchoolOAuth> {
  const byRole = {
    owner: grantableScopes('owner', SCOPE_NAMES),
    student: grantableScopes('student', SCOPE_NAMES),
  } as const;
  const registration: RegistrationRules = { httpsRedirectUris: false, confidentialClients: true };

  const oauth = await createAuthorizationServer({
    issuer: deps.issuer,
    storage: deps.storage,
    paths: OAUTH_PATHS,
    scopePolicy: createScopePolicy({
      registry: courseSchoolScopes,
      // A student cannot grant school-administration scopes (see route-table.ts); the consent
      // page lists those as not granted.
      async grantable(userId, _client, scope) {
        const user = await deps.data.getUser(userId);
        if (user === null) return [];
        return scope.filter((s) => byRole[user.role].has(s));
      },
    }),
    // Each resource's metadata lists the scopes it uses: MCP clients ask for exactly those.
    resources: [
      {
        resource: deps.issuer,
        name: `${deps.title} API`,
        documentation: `${deps.issuer}/auth.md`,
        scopes: SCOPE_NAMES,
      },
      {
        resource: `${deps.issuer}/mcp`,
        name: `${deps.title} MCP server`,
        documentation: `${deps.issuer}/auth.md`,
        scopes: MCP_SCOPES,
      },
    ],
    async authenticate(request) {
      const signedIn = await deps.sessions.read(request.headers.cookie, Date.now());
      if (signedIn === null) return null;
      return {
        id: signedIn.user.id,
        authTime: Math.floor(signedIn.session.authTime / 1000),
        sessionId: signedIn.sessionId,
        // "Signed in as ..." on the consent page: the account, as the user typed it at login.
        name: signedIn.user.email,
      };
    },
    loginUrl: LOGIN_PATH,
    // One instance counts in memory; instances behind a load balancer would share a store
    // (createFlexibleRateLimiter over Redis or PostgreSQL, see docs/security.md).
    ...(deps.rateLimit ? { rateLimiter: createMemoryRateLimiter() } : {}),
    tokens: { timeInTokens: deps.timeInTokens },
    ...(deps.keys === undefined ? {} : { keys: deps.keys }),
    clientIp: deps.clients.clientIp,
    allowedHosts: deps.allowedHosts,
    async claims(userId, scope) {
      const user = await deps.data.getUser(userId);
      if (user === null) return {};
      return {
        ...(scope.includes('profile') ? { name: user.name } : {}),
        ...(scope.includes('email') ? { email: user.email, email_verified: true } : {}),
      };
    },
    registration: {
      allowHttpsRedirectUris: registration.httpsRedirectUris,
      allowConfidentialClients: registration.confidentialClients,
    },
    clientIdMetadataDocuments: { enabled: true },
    // The spec accepts only the authorization code and refresh token grants: no client acts for
    // itself here, so `client_credentials` stays off (said here, not left to the library default).
    clientCredentials: { enabled: false },
    metadata: { serviceName: deps.title, serviceDocumentation: `${deps.issuer}/auth.md` },
  });
  return { oauth, registration, grantable: (role) => byRole[role] };
}
