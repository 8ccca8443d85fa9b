/**
 * `/auth.md`: the authentication walkthrough, generated at start-up from the discovery metadata
 * and the registration rules the server was configured with, so every URL, scope and method it
 * names is the one the server advertises.
 * @module
 */
import type { ScopeRegistry } from 'portcullis';
import type { DemoAccount } from '../seed.js';
import type { Discovery } from './metadata.js';

/** The registration rules, taken from the options given to the library. */
export interface RegistrationRules {
  readonly httpsRedirectUris: boolean;
  readonly confidentialClients: boolean;
}

/** Inputs of {@link buildAuthMd}. */
export interface AuthMdInput {
  readonly discovery: Discovery;
  readonly scopes: ScopeRegistry;
  readonly registration: RegistrationRules;
  /** Scopes a student may grant (the owner may grant all). */
  readonly studentGrantable: ReadonlySet<string>;
  readonly title: string;
  /** The demo accounts to name in the walkthrough; empty when demo data is off. */
  readonly demoAccounts: readonly DemoAccount[];
}

/** The status of each error code, as the server answers them. */
export const ERROR_TABLE: readonly (readonly [code: string, status: string, when: string])[] = [
  ['invalid_request', '400', 'Malformed or incomplete request (a missing or repeated parameter, bad JSON)'],
  [
    'invalid_client',
    '401 (400 for an unknown public client)',
    'Client authentication failed or unknown client',
  ],
  [
    'invalid_grant',
    '400',
    'Code or refresh token invalid, expired, used, or bound to another client or verifier',
  ],
  ['unauthorized_client', '400', 'The client may not use this grant'],
  ['unsupported_grant_type', '400', 'A grant other than those listed above'],
  [
    'invalid_scope',
    '400 (token) or redirect (authorize)',
    'Unknown scope, or one the client did not register',
  ],
  ['invalid_target', '400 or redirect', 'Unknown `resource`'],
  ['invalid_redirect_uri', '400', 'Registration with a non-loopback (for example https) redirect URI'],
  ['invalid_client_metadata', '400', 'Registration metadata invalid'],
  ['access_denied', 'redirect', 'The user chose Deny'],
  [
    'invalid_token',
    '401',
    'Missing-in-a-required-place, malformed, expired, revoked or foreign-audience access token',
  ],
  ['insufficient_scope', '403', 'Valid token without the scope the operation needs (the challenge names it)'],
  ['forbidden', '403', 'Valid token and scope, but the operation is reserved to the school owner'],
  ['too_many_requests', '429', 'Rate limited; see `Retry-After`'],
  [
    'temporarily_unavailable',
    '503',
    'The server cannot reach its database for a moment; retry the same request after `Retry-After` seconds',
  ],
];

/** Builds the Markdown. */
export function buildAuthMd(input: AuthMdInput): string {
  const { discovery, scopes } = input;
  const as = discovery.authorizationServer;
  const issuer = as.issuer;
  const callback = 'http://127.0.0.1:8765/callback';
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);

  push(
    `# Authentication: ${input.title}`,
    '',
    `> How a client gets a token for a user and calls the API of ${issuer}. Generated from the server's metadata; where anything here differs from [the metadata](${discovery.authorizationServerUrl}), the metadata wins.`,
    '',
    'The only method is the OAuth 2.0 authorization code flow with PKCE. Requests without a token are served as anonymous: the public catalog (published courses, public membership plans, public pages) needs no token.',
    '',
    '## Endpoints',
    '',
    '| Purpose | URL |',
    '|---|---|',
    `| Issuer | \`${issuer}\` |`,
    `| Authorization (browser) | ${as.authorization_endpoint} |`,
    `| Token | ${as.token_endpoint} |`,
  );
  if (as.registration_endpoint) push(`| Client registration | ${as.registration_endpoint} |`);
  if (as.userinfo_endpoint) push(`| UserInfo | ${as.userinfo_endpoint} |`);
  if (as.revocation_endpoint) push(`| Revocation | ${as.revocation_endpoint} |`);
  if (as.introspection_endpoint) push(`| Introspection (resource servers) | ${as.introspection_endpoint} |`);
  if (as.jwks_uri) push(`| JWK Set | ${as.jwks_uri} |`);
  push(
    `| Authorization server metadata | ${discovery.authorizationServerUrl} |`,
    `| OpenID configuration | ${discovery.openidConfigurationUrl} |`,
    `| Protected resource metadata (API, resource \`${discovery.api.metadata.resource}\`) | ${discovery.api.url} |`,
    `| Protected resource metadata (MCP, resource \`${discovery.mcp.metadata.resource}\`) | ${discovery.mcp.url} |`,
    '',
    '## Rules',
    '',
    `- Grant types: ${as.grant_types_supported.map((g) => `\`${g}\``).join(', ')}.`,
    `- Response types: ${as.response_types_supported.map((g) => `\`${g}\``).join(', ')}.`,
    `- PKCE is required; code challenge methods: ${as.code_challenge_methods_supported.map((m) => `\`${m}\``).join(', ')}.`,
    `- Token endpoint authentication: ${as.token_endpoint_auth_methods_supported.map((m) => `\`${m}\``).join(', ')} (\`none\` for public clients).`,
    `- The authorization response carries \`iss\` (RFC 9207)${as.authorization_response_iss_parameter_supported ? '' : ' when supported'}: check it equals \`${issuer}\`.`,
    `- Client ID Metadata Documents: ${as.client_id_metadata_document_supported === true ? 'supported (an https `client_id` naming your metadata document)' : 'not supported'}; check \`client_id_metadata_document_supported\` in the metadata before relying on them.`,
    '- Tokens can be bound to one API with `resource` (RFC 8707): the API is `' +
      `${discovery.api.metadata.resource}\`, the MCP server is \`${discovery.mcp.metadata.resource}\`. A token for one is refused by the other.`,
    '- Send the access token in the `Authorization: Bearer` header only (never in the query).',
    '',
    '### Registration',
    '',
    '- Registration is self-serve and needs no initial token.',
    `- Redirect URIs must be loopback: \`http://127.0.0.1:<port>/<path>\`, \`http://[::1]:<port>/<path>\` or \`http://localhost:<port>/<path>\`. At authorization the port may differ from the registered one (RFC 8252 §7.3).`,
    input.registration.httpsRedirectUris
      ? '- https redirect URIs are accepted.'
      : '- A fixed https redirect URI is refused with `400` and `invalid_redirect_uri`: such a client needs a registered integration arranged with support.',
    '- Use `application_type: "native"`.',
    input.registration.confidentialClients
      ? '- Public clients register `token_endpoint_auth_method: "none"`; confidential clients `client_secret_basic` (HTTP Basic, what most OAuth libraries send by default) or `client_secret_post`, and get a `client_secret`.'
      : '- Only public clients (`token_endpoint_auth_method: "none"`) may register.',
    '',
    '## Scopes',
    '',
    'Request scopes in `scope`, space-separated. The school owner may grant every scope; a student may grant only those marked "yes" (others are removed from what the student grants).',
    '',
    '| Scope | Grants | A student may grant |',
    '|---|---|---|',
    ...as.scopes_supported.map(
      (s) =>
        `| \`${s}\` | ${scopes.get(s)?.description ?? ''} | ${input.studentGrantable.has(s) ? 'yes' : 'no'} |`,
    ),
    '',
    '## Errors',
    '',
    'OAuth errors are JSON: `{"error": "<code>", "error_description": "<text>"}` (RFC 6749 §5.2). The API uses the same shape and adds `issues` (each `path` and `message`) to validation errors.',
    '',
    '| Code | Status | When |',
    '|---|---|---|',
    ...ERROR_TABLE.map(([code, status, when]) => `| \`${code}\` | ${status} | ${when} |`),
    '',
    `A protected operation called without a token answers \`401\` with \`WWW-Authenticate: Bearer resource_metadata="${discovery.api.url}"\`, which tells the client where to start.`,
    '',
    '## Walkthrough with curl',
    '',
    input.demoAccounts.length === 0
      ? 'You need an account of this school to sign in at step 3.'
      : `The demo accounts are ${input.demoAccounts.map((a) => `\`${a.email}\` / \`${a.password}\` (${a.role === 'owner' ? 'school owner' : 'student'})`).join(' and ')}.`,
    '',
    '1. Register a public loopback client and keep its `client_id`:',
    '',
    '```sh',
    `curl -s ${as.registration_endpoint ?? `${issuer}/api/oauth/register`} -H 'Content-Type: application/json' \\`,
    `  -d '{"client_name":"My CLI","application_type":"native","redirect_uris":["${callback}"],"token_endpoint_auth_method":"none"}'`,
    'CLIENT_ID=...   # the "client_id" of the answer',
    '```',
    '',
    '2. Make a PKCE pair (RFC 7636) and a state:',
    '',
    '```sh',
    "CODE_VERIFIER=$(openssl rand -base64 60 | tr -d '\\n=+/' | cut -c1-64)",
    "CODE_CHALLENGE=$(printf '%s' \"$CODE_VERIFIER\" | openssl dgst -sha256 -binary | openssl base64 -A | tr '+/' '-_' | tr -d '=')",
    'STATE=$(openssl rand -hex 16)',
    '```',
    '',
    '3. Open the authorization URL in a browser, sign in and choose **Allow**:',
    '',
    '```sh',
    `echo "${as.authorization_endpoint}?response_type=code&client_id=$CLIENT_ID&redirect_uri=${encodeURIComponent(callback)}&scope=openid%20profile%20courses%3Aread&state=$STATE&code_challenge=$CODE_CHALLENGE&code_challenge_method=S256"`,
    '```',
    '',
    `   The browser is sent to \`${callback}?code=...&state=...&iss=...\`. Nothing needs to listen there for this walkthrough: copy \`code\` from the address bar, and check that \`state\` is yours and \`iss\` is \`${issuer}\`. Codes are single-use and short-lived: go on at once.`,
    '',
    '```sh',
    'CODE=...   # the "code" in the address bar',
    '```',
    '',
    '4. Exchange the code for tokens:',
    '',
    '```sh',
    `curl -s ${as.token_endpoint} -d grant_type=authorization_code -d code=$CODE \\`,
    `  -d redirect_uri=${callback} -d client_id=$CLIENT_ID -d code_verifier=$CODE_VERIFIER`,
    'ACCESS_TOKEN=...   # "access_token"',
    'REFRESH_TOKEN=...  # "refresh_token"',
    '```',
    '',
    '5. Call the API (without the header you get the anonymous view):',
    '',
    '```sh',
    `curl -s ${issuer}/api/v1/courses -H "Authorization: Bearer $ACCESS_TOKEN"`,
    '```',
    '',
    '6. Refresh without asking the user again (the refresh token rotates: keep the new one):',
    '',
    '```sh',
    `curl -s ${as.token_endpoint} -d grant_type=refresh_token -d refresh_token=$REFRESH_TOKEN -d client_id=$CLIENT_ID`,
    'ACCESS_TOKEN=...   # the new "access_token"',
    'REFRESH_TOKEN=...  # the new "refresh_token": the one you sent is spent, and using it again ends the grant',
    '```',
    '',
  );
  if (as.revocation_endpoint) {
    push(
      '7. Revoke when done (revoking the refresh token ends the whole grant):',
      '',
      '```sh',
      `curl -s ${as.revocation_endpoint} -d token=$REFRESH_TOKEN -d client_id=$CLIENT_ID`,
      '```',
      '',
    );
  }
  push(
    `Users see and revoke the apps they authorized at ${issuer}/account. The API is described in [OpenAPI](${issuer}/openapi.json).`,
    '',
  );
  return lines.join('\n');
}
