/**
 * CC-01 on the reference server: its spec accepts only the authorization code and refresh token
 * grants, so `client_credentials` is off (set explicitly in oauth.ts). The metadata does not list
 * it, registration refuses it, and a confidential client that asks for it with valid credentials
 * (HTTP Basic, RFC 6749 §2.3.1) gets 400 `unsupported_grant_type` (RFC 6749 §5.2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { startTestServer } from '../helpers/course-school.js';
import { type Site, siteOf } from '../helpers/school-flow.js';

let app: CourseSchoolServer;
let site: Site;

beforeAll(async () => {
  app = await startTestServer();
  site = siteOf(app);
});
afterAll(() => app.close());

const REDIRECT_URI = 'http://127.0.0.1:49152/callback';

function register(metadata: Record<string, unknown>): Promise<Response> {
  return fetch(`${site.base}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Headless agent', redirect_uris: [REDIRECT_URI], ...metadata }),
  });
}

describe('the reference server without the client credentials grant (CC-01)', () => {
  it('does not list client_credentials in grant_types_supported', async () => {
    const response = await fetch(`${site.base}/.well-known/oauth-authorization-server`);
    const metadata = (await response.json()) as { grant_types_supported: string[] };
    expect(metadata.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
  });

  it('refuses to register a client for client_credentials (RFC 7591 §2)', async () => {
    const response = await register({
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_client_metadata' });
  });

  it('answers a confidential client asking for client_credentials with 400 unsupported_grant_type (RFC 6749 §5.2)', async () => {
    const response = await register({ token_endpoint_auth_method: 'client_secret_basic' });
    const client = (await response.json()) as { client_id: string; client_secret: string };
    expect(response.status, JSON.stringify(client)).toBe(201);
    expect(client.client_secret).toBeTypeOf('string');

    const basic = btoa(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`);
    const token = await fetch(`${site.base}/api/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${basic}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'courses:read' }),
    });
    expect(token.status).toBe(400);
    expect(await token.json()).toMatchObject({ error: 'unsupported_grant_type' });
  });
});
