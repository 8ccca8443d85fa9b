/**
 * The generated documents: /openapi.json is valid OpenAPI 3.0.3 and covers the route table;
 * /auth.md, /llms.txt and /pricing.md state what the metadata and the catalog say, and their
 * links resolve.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../examples/course-school/src/api/route-table.js';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { courseSchoolScopes } from '../../examples/course-school/src/scopes.js';
import { startTestServer } from '../helpers/course-school.js';

let app: CourseSchoolServer;
let metadata: Record<string, unknown>;

beforeAll(async () => {
  app = await startTestServer();
  metadata = (await (await fetch(`${app.issuer}/.well-known/oauth-authorization-server`)).json()) as Record<
    string,
    unknown
  >;
});
afterAll(() => app.close());

const text = async (path: string) => {
  const response = await fetch(`${app.issuer}${path}`);
  expect(response.status, path).toBe(200);
  return { response, body: await response.text() };
};

const ENDPOINTS = [
  'authorization_endpoint',
  'token_endpoint',
  'registration_endpoint',
  'revocation_endpoint',
  'userinfo_endpoint',
  'introspection_endpoint',
  'jwks_uri',
];

describe('/openapi.json', () => {
  type Operation = { security?: Record<string, string[]>[]; 'x-scope'?: string };
  type Doc = {
    openapi: string;
    servers: { url: string }[];
    paths: Record<string, Record<string, Operation>>;
    components: {
      securitySchemes: {
        oauth2: {
          type: string;
          flows: {
            authorizationCode: { authorizationUrl: string; tokenUrl: string; scopes: Record<string, string> };
          };
        };
      };
    };
  };
  let doc: Doc;
  beforeAll(async () => {
    doc = JSON.parse((await text('/openapi.json')).body) as Doc;
  });

  it('is a valid OpenAPI 3.0.3 document', async () => {
    expect(doc.openapi).toBe('3.0.3');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('describes this origin, with the oauth2 scheme of the metadata and all 38 scopes described', () => {
    expect(doc.servers).toEqual([{ url: app.issuer }]);
    const scheme = doc.components.securitySchemes.oauth2;
    expect(scheme.type).toBe('oauth2');
    expect(scheme.flows.authorizationCode.authorizationUrl).toBe(metadata.authorization_endpoint);
    expect(scheme.flows.authorizationCode.tokenUrl).toBe(metadata.token_endpoint);
    const scopes = scheme.flows.authorizationCode.scopes;
    expect(Object.keys(scopes)).toEqual(metadata.scopes_supported);
    expect(Object.keys(scopes)).toHaveLength(38);
    for (const [name, description] of Object.entries(scopes)) {
      expect(description).toBe(courseSchoolScopes.get(name)?.description);
    }
  });

  it('has every route of the table, with its one scope', () => {
    for (const route of API_ROUTES) {
      const operation = doc.paths[`/api/v1${route.path}`]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation?.['x-scope']).toBe(route.scope);
      const schemes = operation?.security?.filter((s) => 'oauth2' in s) ?? [];
      expect(schemes).toEqual([{ oauth2: [route.scope] }]);
      // Public routes also accept no token at all (the empty requirement).
      expect(operation?.security?.some((s) => Object.keys(s).length === 0)).toBe(route.access === 'public');
    }
  });

  it('lists the OAuth endpoints of the metadata as operations', () => {
    for (const name of ENDPOINTS) {
      const url = metadata[name];
      if (typeof url !== 'string') continue;
      expect(doc.paths[new URL(url).pathname], name).toBeDefined();
    }
    for (const path of ['/openapi.json', '/auth.md', '/llms.txt', '/pricing.md', '/mcp'])
      expect(doc.paths[path]).toBeDefined();
  });

  it('documents the client authentication each endpoint advertises, and its 429 and 503', () => {
    type Form = { requestBody?: { content: Record<string, { schema: { properties: object } }> } };
    const forms: [endpoint: string, methods: unknown][] = [
      [String(metadata.token_endpoint), metadata.token_endpoint_auth_methods_supported],
      [String(metadata.revocation_endpoint), metadata.revocation_endpoint_auth_methods_supported],
      [String(metadata.introspection_endpoint), metadata.introspection_endpoint_auth_methods_supported],
    ];
    for (const [endpoint, methods] of forms) {
      const operation = doc.paths[new URL(endpoint).pathname]?.post as (Operation & Form) | undefined;
      const fields = Object.keys(
        operation?.requestBody?.content['application/x-www-form-urlencoded']?.schema.properties ?? {},
      );
      expect(fields, endpoint).toContain('client_id');
      expect(fields.includes('client_secret'), endpoint).toBe(
        (methods as string[]).includes('client_secret_post'),
      );
      expect(fields.includes('client_assertion'), endpoint).toBe(
        (methods as string[]).includes('private_key_jwt'),
      );
      expect(Object.keys((operation as { responses?: object })?.responses ?? {})).toEqual(
        expect.arrayContaining(['429', '503']),
      );
    }
  });
});

describe('/auth.md', () => {
  let md: string;
  beforeAll(async () => {
    const { response, body } = await text('/auth.md');
    expect(response.headers.get('content-type')).toMatch(/^text\/markdown/);
    md = body;
  });

  it('names every endpoint of the metadata with its exact URL', () => {
    for (const name of ENDPOINTS) {
      const url = metadata[name];
      if (typeof url === 'string') expect(md, name).toContain(url);
    }
    expect(md).toContain(`\`${metadata.issuer}\``);
  });

  it('lists exactly the scopes of the metadata, and which a student may grant', () => {
    const rows = [...md.matchAll(/^\| `([^`]+)` \| [^|]* \| (yes|no) \|$/gm)];
    expect(rows.map((r) => r[1])).toEqual(metadata.scopes_supported);
    expect(rows.find((r) => r[1] === 'students:read')?.[2]).toBe('no');
    expect(rows.find((r) => r[1] === 'courses:read')?.[2]).toBe('yes');
  });

  it('states the registration, PKCE and grant rules the metadata advertises', () => {
    expect(md).toContain('invalid_redirect_uri');
    expect(md).toContain('http://127.0.0.1:<port>/<path>');
    for (const method of metadata.code_challenge_methods_supported as string[])
      expect(md).toContain(`\`${method}\``);
    for (const grant of metadata.grant_types_supported as string[]) expect(md).toContain(`\`${grant}\``);
    for (const auth of metadata.token_endpoint_auth_methods_supported as string[])
      expect(md).toContain(`\`${auth}\``);
    expect(md).not.toContain('`plain`');
  });

  it('walks through register, PKCE, authorize, token, API, refresh and revoke with curl', () => {
    const curls = [...md.matchAll(/curl -s (\S+)/g)].map((m) => m[1]);
    expect(curls).toEqual([
      metadata.registration_endpoint,
      metadata.token_endpoint,
      `${app.issuer}/api/v1/courses`,
      metadata.token_endpoint,
      metadata.revocation_endpoint,
    ]);
    expect(md).toContain('code_challenge_method=S256');
    expect(md).toContain('grant_type=refresh_token');
    expect(md).toContain('openssl dgst -sha256');
  });

  it('has an error table with the statuses of spec §7', () => {
    expect(md).toMatch(/^\| `invalid_token` \| 401 \|/m);
    expect(md).toMatch(/^\| `insufficient_scope` \| 403 \|/m);
  });
});

describe('/llms.txt', () => {
  let body: string;
  beforeAll(async () => {
    body = (await text('/llms.txt')).body;
  });

  it('follows the llms.txt shape: H1, blockquote summary, sections of links', () => {
    const lines = body.split('\n');
    expect(lines[0]).toBe('# Lovelace School of Computing');
    expect(lines.find((l) => l !== '' && !l.startsWith('# '))).toMatch(/^> /);
    expect(body).toMatch(/^## Docs$/m);
    expect(body).toMatch(/^## Optional$/m);
    for (const line of lines.filter((l) => l.startsWith('- ')))
      expect(line).toMatch(/^- \[[^\]]+\]\([^)]+\)/);
  });

  it('links only to documents of this origin that resolve, including the metadata', async () => {
    const links = [...body.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    expect(links).toContain(`${app.issuer}/auth.md`);
    expect(links).toContain(`${app.issuer}/.well-known/oauth-authorization-server`);
    for (const link of links) {
      expect(link.startsWith(`${app.issuer}/`), link).toBe(true);
      const response = await fetch(link);
      // /mcp takes POST only; every other link is a readable document.
      expect(response.status, link).toBe(link === `${app.issuer}/mcp` ? 405 : 200);
    }
  });
});

describe('/pricing.md and the home page', () => {
  it('prices public plans and published products, and nothing private', async () => {
    const { body } = await text('/pricing.md');
    expect(body).toMatch(/^# Pricing/);
    expect(body).toContain('| Pro monthly | $19.00 per month |');
    expect(body).toContain('| Compilers from Scratch | intermediate | $99.00 |');
    expect(body).toContain('| Debugging in Practice | beginner | Free |');
    expect(body).not.toContain('Team');
    expect(body).not.toContain('Advanced Bernoulli');
    expect(body).not.toContain('Compiler course notes');
  });

  it('links the home page to every document, which all resolve', async () => {
    const { response, body } = await text('/');
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const links = [...body.matchAll(/href="(\/[^"]*)"/g)].map((m) => m[1]!);
    for (const doc of [
      '/openapi.json',
      '/auth.md',
      '/llms.txt',
      '/pricing.md',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      expect(links).toContain(doc);
    }
    for (const link of links)
      expect((await fetch(`${app.issuer}${link}`, { redirect: 'manual' })).status, link).toBeLessThan(400);
  });
});
