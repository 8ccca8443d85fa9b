/**
 * Validation of a fetched Client ID Metadata Document into the metadata of a public client.
 *
 * Rules (decided here, documented in docs/security.md):
 * - a JSON object whose `client_id` equals the URL it was fetched from, byte for byte (§4.1);
 * - no `client_secret` or `client_secret_expires_at`, and `token_endpoint_auth_method` absent,
 *   `none`, or `private_key_jwt` with `jwks` or `jwks_uri` (public keys only, a supported `alg`,
 *   an https `jwks_uri`): there is no way to share a secret (§4.1), but a key the document
 *   publishes proves the client at the token endpoint (RFC 7523; ChatGPT's documents use it);
 * - `redirect_uris`: 1 to `maxRedirectUris` entries, each a loopback URI by the registration rule
 *   or an https URI (the document is published by the client's own origin, which vouches for it;
 *   the consent page shows the redirect host next to the client_id host);
 * - `client_name` required (MCP asks for it; the consent page shows it as secondary to the host);
 * - `grant_types` and `response_types` keep what this server offers (`authorization_code`,
 *   `refresh_token`; `code`) and drop the rest: a document speaks to every server its client uses
 *   (VS Code's lists the device grant, Claude's the JWT bearer grant), and RFC 7591 §2 lets a server
 *   replace values it does not support. What remains must hold `authorization_code` and `code`.
 *   RFC 7591 default when absent: `authorization_code` only, so no refresh tokens unless asked for;
 * - display fields and URLs follow the same rules as dynamic registration; unknown members are ignored.
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4.1, §4.5, §6.1, §6.2
 * @module
 */
import { z } from 'zod';
import { isOAuthError, OAuthError } from '../core/errors.js';
import { refuseHostileJson } from '../core/params.js';
import { type ClientJwksRules, clientKeyMetadataProblem } from '../protocol/client-jwks.js';
import {
  clientMetadataFields,
  displayName,
  grantTypesProblem,
  SUPPORTED_GRANT_TYPES,
} from '../protocol/client-metadata.js';
import type { AddressRange } from '../protocol/ip-address.js';
import { checkRegisteredRedirectUri, isLoopbackRedirect } from '../protocol/redirect-uri.js';
import { parseScope } from '../protocol/scope.js';
import type { ClientMetadata } from '../storage/types.js';
import { ClientMetadataDocumentError } from './errors.js';

const documentSchema = z.object({
  ...clientMetadataFields,
  redirect_uris: clientMetadataFields.redirect_uris.min(1, 'must not be empty'),
  client_name: displayName(200),
  application_type: z.enum(['native', 'web'], "must be 'native' or 'web'").optional(),
});

function invalid(reason: string): ClientMetadataDocumentError {
  return new ClientMetadataDocumentError('invalid_document', reason);
}

// Echoed in the reason only when it has the shape of a method name, so documents cannot write on our page.
const SECRET_METHOD = /^client_secret_[a-z_]{1,30}$/;

/**
 * Validates a metadata document fetched from `clientId` into the client's effective metadata.
 *
 * @param clientId - the URL the document was fetched from (the client_id as received)
 * @param text - the document body, decoded as UTF-8
 * @param maxRedirectUris - the most `redirect_uris` accepted
 * @param keyRules - for `private_key_jwt` documents: the accepted algorithms, and the special-use
 *   ranges a `jwks_uri` may name (default: every supported algorithm, none); `null` refuses
 *   `private_key_jwt` (the server does not offer it)
 * @returns the metadata of a public client (`token_endpoint_auth_method: 'none'`), or of a
 *   `private_key_jwt` client with its `jwks` or `jwks_uri`
 * @throws ClientMetadataDocumentError `invalid_document`, with the rule broken as its reason
 * @see draft-ietf-oauth-client-id-metadata-document-01 §4.1
 * @example
 * ```ts
 * const metadata = validateMetadataDocument(
 *   'https://app.example/client.json',
 *   JSON.stringify({
 *     client_id: 'https://app.example/client.json',
 *     client_name: 'App',
 *     redirect_uris: ['http://127.0.0.1/callback'],
 *   }),
 *   10,
 * );
 * metadata.token_endpoint_auth_method; // 'none'
 * ```
 */
export function validateMetadataDocument(
  clientId: string,
  text: string,
  maxRedirectUris: number,
  keyRules: (ClientJwksRules & { readonly allowedAddresses?: readonly AddressRange[] }) | null = {},
): ClientMetadata {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('the document is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('the document is not a JSON object');
  }
  try {
    refuseHostileJson(value, 'invalid_client_metadata');
  } catch (error) {
    throw isOAuthError(error)
      ? invalid(error.description ?? 'the document holds a forbidden character')
      : error;
  }
  const doc = value as Record<string, unknown>;

  if (typeof doc.client_id !== 'string') throw invalid('the document has no client_id');
  // Simple string comparison (RFC 3986 §6.2.1): no case folding, no trailing-slash or query leniency.
  if (doc.client_id !== clientId) {
    throw invalid('the client_id in the document differs from the URL it was fetched from');
  }
  if ('client_secret' in doc || 'client_secret_expires_at' in doc) {
    throw invalid('the document carries a client secret; metadata document clients are public clients');
  }
  const method = doc.token_endpoint_auth_method;
  let keys: Pick<ClientMetadata, 'jwks' | 'jwks_uri'> = {};
  if (method === 'private_key_jwt' && keyRules !== null) {
    const checked = clientKeyMetadataProblem(doc, keyRules);
    if (!checked.ok) throw invalid(checked.problem);
    keys = checked.keys;
  } else if (method !== undefined && method !== 'none') {
    if (typeof method === 'string' && SECRET_METHOD.test(method)) {
      throw invalid(
        `token_endpoint_auth_method '${method}' needs a shared secret, which a metadata document cannot establish`,
      );
    }
    throw invalid(
      keyRules === null
        ? "token_endpoint_auth_method must be 'none'"
        : "token_endpoint_auth_method must be 'none' or 'private_key_jwt'",
    );
  }

  const parsed = documentSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.map(String).join('.') || 'document';
    const missing = issue.path.length === 1 && doc[String(issue.path[0])] === undefined;
    throw invalid(missing ? `${field} is required` : `${field} ${issue.message}`);
  }
  const m = parsed.data;

  if (m.redirect_uris.length > maxRedirectUris)
    throw invalid(`at most ${maxRedirectUris} redirect_uris are accepted`);
  m.redirect_uris.forEach((uri, i) => {
    if (checkRegisteredRedirectUri(uri, true) !== undefined) {
      throw invalid(
        `redirect_uris[${i}] must be a loopback URI (http://127.0.0.1:<port>/path) or an https URI, without fragment, user info or dot segments`,
      );
    }
  });

  const grantTypes = (m.grant_types ?? ['authorization_code']).filter((g) => SUPPORTED_GRANT_TYPES.has(g));
  if (!(m.response_types ?? ['code']).includes('code'))
    throw invalid("response_types must include 'code': this server offers the authorization code flow only");
  const grantProblem = grantTypesProblem(grantTypes, ['code']);
  if (grantProblem !== undefined) throw invalid(`${grantProblem[0]}: ${grantProblem[1]}`);

  let scope: string | undefined;
  if (m.scope !== undefined) {
    try {
      scope = parseScope(m.scope).join(' ');
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      throw invalid('scope must be space-separated scope tokens');
    }
  }

  return {
    redirect_uris: m.redirect_uris,
    token_endpoint_auth_method:
      method === 'private_key_jwt' && keyRules !== null ? 'private_key_jwt' : 'none',
    grant_types: [...new Set(grantTypes)] as ClientMetadata['grant_types'],
    response_types: ['code'],
    application_type: m.application_type ?? (m.redirect_uris.every(isLoopbackRedirect) ? 'native' : 'web'),
    client_name: m.client_name,
    ...(m.client_uri === undefined ? {} : { client_uri: m.client_uri }),
    ...(m.logo_uri === undefined ? {} : { logo_uri: m.logo_uri }),
    ...(m.policy_uri === undefined ? {} : { policy_uri: m.policy_uri }),
    ...(m.tos_uri === undefined ? {} : { tos_uri: m.tos_uri }),
    ...(m.contacts === undefined ? {} : { contacts: m.contacts }),
    ...(scope === undefined || scope === '' ? {} : { scope }),
    ...(m.software_id === undefined ? {} : { software_id: m.software_id }),
    ...(m.software_version === undefined ? {} : { software_version: m.software_version }),
    ...(m.id_token_signed_response_alg === undefined
      ? {}
      : { id_token_signed_response_alg: m.id_token_signed_response_alg }),
    ...(m.dpop_bound_access_tokens === undefined
      ? {}
      : { dpop_bound_access_tokens: m.dpop_bound_access_tokens }),
    ...keys,
  };
}
