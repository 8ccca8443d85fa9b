/**
 * The library's discovery documents, read once at start-up through `oauth.handle` exactly as a
 * client reads them. Every generated document (OpenAPI, auth.md, llms.txt) takes its endpoint
 * URLs, scopes and rules from here, so none can drift from the metadata.
 * @module
 */
import type { AuthorizationServer } from 'portcullis';
import { z } from 'zod';

const url = z.url();

const authorizationServerMetadata = z.looseObject({
  issuer: url,
  authorization_endpoint: url,
  token_endpoint: url,
  registration_endpoint: url.optional(),
  revocation_endpoint: url.optional(),
  introspection_endpoint: url.optional(),
  userinfo_endpoint: url.optional(),
  jwks_uri: url.optional(),
  scopes_supported: z.array(z.string()),
  response_types_supported: z.array(z.string()),
  grant_types_supported: z.array(z.string()),
  code_challenge_methods_supported: z.array(z.string()),
  token_endpoint_auth_methods_supported: z.array(z.string()),
  revocation_endpoint_auth_methods_supported: z.array(z.string()).optional(),
  introspection_endpoint_auth_methods_supported: z.array(z.string()).optional(),
  authorization_response_iss_parameter_supported: z.boolean().optional(),
  client_id_metadata_document_supported: z.boolean().optional(),
});

const protectedResourceMetadata = z.looseObject({
  resource: url,
  authorization_servers: z.array(url),
  scopes_supported: z.array(z.string()).optional(),
  bearer_methods_supported: z.array(z.string()).optional(),
});

/** RFC 8414 authorization-server metadata, the members the documents use. */
export type AuthorizationServerMetadata = z.infer<typeof authorizationServerMetadata>;
/** RFC 9728 protected-resource metadata. */
export type ProtectedResourceMetadata = z.infer<typeof protectedResourceMetadata>;

/** The documents, with the URL each was fetched from. */
export interface Discovery {
  readonly authorizationServer: AuthorizationServerMetadata;
  readonly authorizationServerUrl: string;
  readonly openidConfigurationUrl: string;
  /** The API's resource (`$ISSUER`) and its metadata URL. */
  readonly api: { readonly metadata: ProtectedResourceMetadata; readonly url: string };
  /** The MCP resource (`$ISSUER/mcp`) and its metadata URL. */
  readonly mcp: { readonly metadata: ProtectedResourceMetadata; readonly url: string };
}

async function fetchDocument<T>(oauth: AuthorizationServer, path: string, schema: z.ZodType<T>): Promise<T> {
  const response = await oauth.handle({ method: 'GET', url: path, headers: { accept: 'application/json' } });
  if (response === null || response.status !== 200 || response.body === undefined) {
    throw new Error(`the authorization server does not serve ${path} (status ${response?.status ?? 'none'})`);
  }
  return schema.parse(JSON.parse(response.body));
}

/** Reads the discovery documents from the library. */
export async function loadDiscovery(oauth: AuthorizationServer): Promise<Discovery> {
  const issuer = oauth.issuer;
  const paths = {
    as: '/.well-known/oauth-authorization-server',
    oidc: '/.well-known/openid-configuration',
    api: '/.well-known/oauth-protected-resource',
    mcp: '/.well-known/oauth-protected-resource/mcp',
  };
  const [as, api, mcp] = await Promise.all([
    fetchDocument(oauth, paths.as, authorizationServerMetadata),
    fetchDocument(oauth, paths.api, protectedResourceMetadata),
    fetchDocument(oauth, paths.mcp, protectedResourceMetadata),
  ]);
  return {
    authorizationServer: as,
    authorizationServerUrl: `${issuer}${paths.as}`,
    openidConfigurationUrl: `${issuer}${paths.oidc}`,
    api: { metadata: api, url: `${issuer}${paths.api}` },
    mcp: { metadata: mcp, url: `${issuer}${paths.mcp}` },
  };
}

/** The path of an endpoint URL on this origin (the documents list paths under `servers`). */
export function pathOf(endpoint: string): string {
  return new URL(endpoint).pathname;
}
