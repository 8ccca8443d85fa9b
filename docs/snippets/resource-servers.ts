import { createServer } from 'node:http';
import express from 'express';
import { base64url, exportJWK, generateKeyPair, SignJWT } from 'jose';
import {
  type AuthorizationServer,
  createAuthorizationServer,
  createResourceGuard,
  createScopePolicy,
  defineScopes,
  introspectionVerifier,
  jwksVerifier,
  oidcScopes,
  type ResourceGuard,
  type Storage,
  storageVerifier,
} from 'portcullis';
import { type GuardedRequest, requireToken } from 'portcullis/express';
import { withGuard } from 'portcullis/fetch';
import { guardNodeRequest, nodeHeaders } from 'portcullis/node';

/** The API's own data. */
declare const notes: { list(owner: string | null): Promise<string[]> };

// #region resources
/** The authorization server, with the two APIs its tokens may be for. */
export function createOAuth(storage: Storage): Promise<AuthorizationServer> {
  return createAuthorizationServer({
    issuer: 'https://auth.example.com',
    storage,
    scopePolicy: createScopePolicy({
      registry: defineScopes([...oidcScopes, { name: 'notes:read', description: 'Read your notes' }]),
    }),
    resources: [
      // The first is the default audience, for requests that name no resource.
      { resource: 'https://api.example.com', name: 'Notes API', scopes: ['notes:read'] },
      { resource: 'https://auth.example.com/mcp', name: 'Notes MCP server', scopes: ['notes:read'] },
    ],
  });
}
// #endregion resources

// #region check
/** Any framework: pass the headers, method and URL, ask the guard, answer its response or serve the caller. */
export async function handle(
  guard: ResourceGuard,
  request: { method: string; url: string; authorization?: string; dpop?: string },
) {
  const result = await guard.check(
    {
      // `dpop`, `method` and `url`: a DPoP-bound token's proof is checked against them (RFC 9449).
      headers: { authorization: request.authorization, dpop: request.dpop },
      method: request.method,
      url: request.url,
    },
    { scope: 'notes:read', required: true },
  );
  if (!result.ok) return result.response; // { status, headers (www-authenticate), body }
  const { principal } = result;
  return {
    status: 200,
    body: JSON.stringify(await notes.list(principal.anonymous ? null : principal.subject)),
  };
}
// #endregion check

// #region express
export function expressApi(oauth: AuthorizationServer) {
  const app = express();
  const guard = oauth.guard({ resource: 'https://api.example.com' });
  // Anonymous callers pass (req.auth.anonymous); a token, if sent, must be valid.
  app.get('/notes/public', requireToken(guard), async (req, res) => {
    const { auth } = req as GuardedRequest;
    res.json(await notes.list(auth.anonymous ? null : auth.subject));
  });
  // A token with notes:read is required.
  app.get('/notes', requireToken(guard, { scope: 'notes:read', required: true }), async (req, res) => {
    const { auth } = req as GuardedRequest;
    res.json(await notes.list(auth.anonymous ? null : auth.subject));
  });
  return app;
}
// #endregion express

// #region fetch
export function fetchApi(guard: ResourceGuard) {
  return withGuard(guard, { scope: 'notes:read', required: true }, async (_request, auth) =>
    Response.json(await notes.list(auth.anonymous ? null : auth.subject)),
  );
}
// #endregion fetch

// #region node
export function nodeApi(guard: ResourceGuard) {
  return createServer(async (req, res) => {
    // Writes the 400/401/403 and returns null, or returns the caller.
    const auth = await guardNodeRequest(guard, req, res, { scope: 'notes:read', required: true });
    if (auth === null) return;
    res.end(JSON.stringify(await notes.list(auth.anonymous ? null : auth.subject)));
  });
}

/** The same with the pure guard: pass nodeHeaders(req), never req.headers. */
export async function nodeCheck(guard: ResourceGuard, req: import('node:http').IncomingMessage) {
  return guard.check(
    { headers: nodeHeaders(req), method: req.method ?? 'GET', url: req.url ?? '/' },
    { scope: 'notes:read' },
  );
}
// #endregion node

// #region storage-verifier
/** A separate API process on the authorization server's database. */
export function storageGuard(storage: Storage): ResourceGuard {
  return createResourceGuard({
    resource: 'https://api.example.com',
    verifier: storageVerifier({ storage }), // the same storage the authorization server writes
    resourceMetadataUrl: 'https://api.example.com/.well-known/oauth-protected-resource',
  });
}
// #endregion storage-verifier

// #region introspection-server
/** The authorization server lets the notes API introspect tokens issued for it. */
export function createOAuthWithIntrospection(
  storage: Storage,
  apiSecret: string,
): Promise<AuthorizationServer> {
  return createAuthorizationServer({
    issuer: 'https://auth.example.com',
    storage,
    resources: [{ resource: 'https://api.example.com' }],
    introspection: {
      callers: [{ clientId: 'notes-api', clientSecret: apiSecret, resources: ['https://api.example.com'] }],
    },
  });
}
// #endregion introspection-server

// #region introspection-verifier
/** The notes API asks the authorization server about every token. */
export function introspectionGuard(apiSecret: string, fetchImpl: typeof fetch = fetch): ResourceGuard {
  return createResourceGuard({
    resource: 'https://api.example.com',
    verifier: introspectionVerifier({
      endpoint: 'https://auth.example.com/oauth/introspect',
      clientId: 'notes-api',
      clientSecret: apiSecret,
      fetch: fetchImpl,
    }),
    resourceMetadataUrl: 'https://api.example.com/.well-known/oauth-protected-resource',
  });
}
// #endregion introspection-verifier

// #region jwks-verifier
/** The notes API checks signatures with the published keys: no call, no database. */
export function jwksGuard(): ResourceGuard {
  return createResourceGuard({
    resource: 'https://api.example.com',
    verifier: jwksVerifier({
      issuer: 'https://auth.example.com',
      jwksUri: 'https://auth.example.com/.well-known/jwks.json',
    }),
    resourceMetadataUrl: 'https://api.example.com/.well-known/oauth-protected-resource',
  });
}
// #endregion jwks-verifier

// #region dpop-client
/**
 * A DPoP client (RFC 9449), with `jose`: one key pair kept by the client, a fresh proof for every
 * request. The token request's proof names the token endpoint; an API call's proof names the API
 * URL and carries `ath`, the hash of the access token it comes with.
 */
export async function dpopClient() {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  let nonce: string | undefined; // only when the server requires nonces (use_dpop_nonce)

  async function proof(method: string, url: string, accessToken?: string): Promise<string> {
    const ath =
      accessToken === undefined
        ? undefined
        : base64url.encode(
            new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(accessToken))),
          );
    return new SignJWT({ htm: method, htu: url, ...(ath && { ath }), ...(nonce && { nonce }) })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .setIssuedAt()
      .setJti(crypto.randomUUID())
      .sign(privateKey);
  }

  /** Sends a request with a proof; once more with the server's nonce if it asks for one. */
  async function send(url: string, init: RequestInit & { accessToken?: string }): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const method = init.method ?? 'GET';
      const headers = new Headers(init.headers);
      headers.set('dpop', await proof(method, url, init.accessToken));
      if (init.accessToken !== undefined) headers.set('authorization', `DPoP ${init.accessToken}`);
      const response = await fetch(url, { ...init, headers });
      nonce = response.headers.get('dpop-nonce') ?? nonce;
      const askedForNonce =
        (response.status === 400 || response.status === 401) &&
        (response.headers.get('www-authenticate') ?? (await response.clone().text())).includes(
          'use_dpop_nonce',
        );
      if (!askedForNonce || attempt > 0) return response;
    }
  }

  return {
    /** The token request: `token_type` in the answer is `DPoP`, its tokens bound to this key. */
    token: (tokenEndpoint: string, params: Record<string, string>) =>
      send(tokenEndpoint, { method: 'POST', body: new URLSearchParams(params) }),
    /** An API call with the bound access token. */
    call: (url: string, accessToken: string) => send(url, { accessToken }),
  };
}
// #endregion dpop-client
