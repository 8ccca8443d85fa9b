/**
 * `/llms.txt` (llmstxt.org): an H1 title, a blockquote summary, then sections of links to the
 * documents and the public API, built from the same discovery values as the other documents.
 * @module
 */
import type { Discovery } from './metadata.js';

/** Builds the text. */
export function buildLlmsTxt(input: { readonly discovery: Discovery; readonly title: string }): string {
  const { discovery } = input;
  const issuer = discovery.authorizationServer.issuer;
  return [
    `# ${input.title}`,
    '',
    "> An online course school with an OAuth 2.1 / OpenID Connect protected API. The catalog (published courses, public membership plans, public pages) is readable without a token, over REST and MCP; everything else needs a user's access token obtained with the authorization code flow and PKCE, by a self-registered loopback client.",
    '',
    'Agents: do not guess endpoints. Read auth.md first; it is generated from the server metadata. A request without a token is served as anonymous and never challenged, except for operations that need a user, which answer 401 with a `resource_metadata` pointer.',
    '',
    '## Docs',
    '',
    `- [Authentication walkthrough](${issuer}/auth.md): registration rules, PKCE, scopes, errors, curl walkthrough`,
    `- [OpenAPI description](${issuer}/openapi.json): every API operation with its parameters and its scope`,
    `- [Pricing](${issuer}/pricing.md): membership plans, courses and digital products with prices`,
    '',
    '## API',
    '',
    `- [Course catalog](${issuer}/api/v1/courses): published courses, no token needed; \`?q=\` searches`,
    `- [Membership plans](${issuer}/api/v1/membership-plans): public plans, no token needed`,
    `- [Pages](${issuer}/api/v1/pages): public pages, no token needed`,
    `- [MCP server](${issuer}/mcp): Streamable HTTP (POST JSON-RPC); tools search_courses, get_course, list_membership_plans; anonymous`,
    '',
    '## Metadata',
    '',
    `- [Authorization server metadata](${discovery.authorizationServerUrl}): RFC 8414`,
    `- [OpenID configuration](${discovery.openidConfigurationUrl}): OpenID Connect Discovery`,
    `- [Protected resource metadata](${discovery.api.url}): RFC 9728, resource ${discovery.api.metadata.resource}`,
    `- [Protected resource metadata of the MCP server](${discovery.mcp.url}): RFC 9728, resource ${discovery.mcp.metadata.resource}`,
    '',
    '## Optional',
    '',
    `- [Home page](${issuer}/): for people: the catalog and how to try the flow`,
    '',
  ].join('\n');
}
