/**
 * The comparison server: oidc-provider 9 configured as closely to the course-school reference
 * server as it allows, with the same shape of flow the benchmark drives on ours.
 *
 * | Ours (portcullis defaults in examples/course-school) | Here |
 * |---|---|
 * | memory storage, unbounded, swept for expiry | oidc-provider's own MemoryAdapter over an unbounded TTL map (its default is a 1,000-entry LRU, which would evict sessions under load) |
 * | open dynamic registration (RFC 7591), loopback redirects | `features.registration` open, native clients with loopback redirects |
 * | PKCE required, S256 only | `pkce.required` always (oidc-provider 9 supports S256 only) |
 * | refresh token for every client allowed the grant, rotated on every use | `issueRefreshToken` when the client may use the grant, `rotateRefreshToken: true` |
 * | introspection by the token's own client (client_secret_post) | `features.introspection`, the client's own auth method |
 * | userinfo | `features.userinfo` (on by default) |
 * | consent page, then Allow, then the code (303) | interaction: consent page at `/interaction/:uid`, Allow posts to `.../confirm`, resume at `/auth/:uid`, then the code |
 * | TTLs: code 60 s, access token 900 s, refresh 30 days, grant 90 days, pending 600 s | same |
 * | ID tokens RS256 (generated keys for RS256 and ES256) | same keys, default RS256 |
 *
 * What stays different: oidc-provider mints opaque access tokens (ours are JWTs, signed and
 * stored), and returns a new ID token on refresh for `openid` grants (ours does not by default).
 *
 * Environment: `PORT` (required), `HOST` (127.0.0.1). Prints `oidc-provider listening on <url>`.
 * @module
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('PORT must be a port number');
const issuer = `http://${host}:${port}`;

/** The one account every virtual user signs in as (ours: ada@example.com). */
const ACCOUNT = { sub: 'ada', name: 'Ada Lovelace', email: 'ada@example.com' };

/**
 * A Map with per-entry expiry and the `get`/`set`/`delete` of oidc-provider's LRU, without its
 * size cap. Expired entries are dropped on read and by a sweep, as our memory storage does.
 */
class TtlStore {
  /** @type {Map<string, { value: unknown, expiry: number }>} */
  #entries = new Map();

  constructor() {
    setInterval(() => {
      const now = Date.now();
      for (const [key, entry] of this.#entries) if (entry.expiry <= now) this.#entries.delete(key);
    }, 300_000).unref();
  }

  /** @param {string} key */
  get(key) {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiry <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /**
   * @param {string} key
   * @param {unknown} value
   * @param {{ maxAge?: number }} [options]
   */
  set(key, value, options) {
    const expiry = options?.maxAge === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.maxAge;
    this.#entries.set(key, { value, expiry });
  }

  /** @param {string} key */
  delete(key) {
    this.#entries.delete(key);
  }
}

const store = new TtlStore();

/** @param {'RS256' | 'ES256'} alg */
function signingKey(alg) {
  const { privateKey } =
    alg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    ...privateKey.export({ format: 'jwk' }),
    alg,
    use: 'sig',
    kid: `${alg}-${randomBytes(4).toString('hex')}`,
  };
}

const provider = new Provider(issuer, {
  adapter: (/** @type {string} */ model) => new MemoryAdapter(model, store),
  jwks: { keys: [signingKey('RS256'), signingKey('ES256')] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  async findAccount(_ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, name: ACCOUNT.name, email: ACCOUNT.email, email_verified: true };
      },
    };
  },
  scopes: ['openid', 'offline_access', 'profile', 'email', 'courses:read'],
  claims: { openid: ['sub'], profile: ['name'], email: ['email', 'email_verified'] },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    userinfo: { enabled: true },
  },
  pkce: { required: () => true },
  async issueRefreshToken(_ctx, client) {
    return client.grantTypeAllowed('refresh_token');
  },
  rotateRefreshToken: true,
  ttl: {
    AuthorizationCode: 60,
    AccessToken: 900,
    IdToken: 3600,
    RefreshToken: 30 * 86_400,
    Grant: 90 * 86_400,
    Interaction: 600,
    Session: 14 * 86_400,
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
});

/** @param {string} s */
const escapeHtml = (s) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/**
 * A page of about the size of ours (the library's consent page), so both servers render and send
 * comparable HTML.
 * @param {string} title
 * @param {string} body
 */
function page(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem}.muted{color:#555}.actions{display:flex;gap:.5rem}button{font:inherit;padding:.5rem 1rem}</style></head><body>${body}</body></html>`;
}

/** @param {import('node:http').IncomingMessage} req */
async function drain(req) {
  for await (const _ of req) {
    // The forms carry nothing the handlers need: the interaction is bound to its cookie.
  }
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {string} html
 */
function sendHtml(res, html) {
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(html),
  });
  res.end(html);
}

/**
 * The host's interaction routes: the login form (used once per virtual user, outside the
 * measurement), the consent page and its Allow.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {string} path
 */
async function interaction(req, res, path) {
  const [, , uid, action] = path.split('/');
  if (req.method === 'GET' && action === undefined) {
    const details = await provider.interactionDetails(req, res);
    const client = await provider.Client.find(String(details.params.client_id));
    if (details.prompt.name === 'login') {
      sendHtml(
        res,
        page(
          'Sign in',
          `<h1>Sign in</h1><form method="post" action="/interaction/${escapeHtml(uid ?? '')}/login"><input name="email" type="email"><input name="password" type="password"><button type="submit">Sign in</button></form>`,
        ),
      );
      return;
    }
    const scopes = String(details.params.scope ?? '')
      .split(' ')
      .map((s) => `<li><code>${escapeHtml(s)}</code></li>`)
      .join('');
    sendHtml(
      res,
      page(
        `Allow ${client?.clientName ?? details.params.client_id}?`,
        `<h1>Allow access?</h1><p>${escapeHtml(String(client?.clientName ?? ''))}<br><span class="muted">Client ID <code>${escapeHtml(String(details.params.client_id))}</code></span></p><p>wants to:</p><ul>${scopes}</ul><form method="post" action="/interaction/${escapeHtml(uid ?? '')}/confirm"><div class="actions"><button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny">Deny</button></div></form><p class="muted">Signed in as <code>${escapeHtml(ACCOUNT.email)}</code>.</p>`,
      ),
    );
    return;
  }
  if (req.method === 'POST' && action === 'login') {
    await drain(req);
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: ACCOUNT.sub } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (req.method === 'POST' && action === 'confirm') {
    await drain(req);
    const details = await provider.interactionDetails(req, res);
    const { prompt, params, session } = details;
    const grant =
      details.grantId === undefined
        ? new provider.Grant({ accountId: session?.accountId, clientId: String(params.client_id) })
        : await provider.Grant.find(details.grantId);
    if (grant === undefined) throw new Error('grant not found');
    const missing = /** @type {{ missingOIDCScope?: string[], missingOIDCClaims?: string[] }} */ (
      prompt.details
    );
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    const grantId = await grant.save();
    const consent = details.grantId === undefined ? { grantId } : {};
    await provider.interactionFinished(req, res, { consent }, { mergeWithLastSubmission: true });
    return;
  }
  res.writeHead(404).end();
}

const callback = provider.callback();
const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.startsWith('/interaction/')) {
    interaction(req, res, path).catch((error) => {
      console.error('interaction failed:', error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('interaction failed');
    });
    return;
  }
  callback(req, res);
});
server.listen(port, host, () => console.log(`oidc-provider listening on ${issuer}`));

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
