/**
 * The whole flow in a real browser. openid-client (discovery, PKCE S256, state, nonce)
 * builds the authorization URL; headless Chromium signs in on the login page, allows on the
 * library's consent page and follows the 303 to a loopback callback listener (so the consent
 * page's CSP `form-action` must let it go there); openid-client then redeems the code (checking
 * `iss` and `state`), reads UserInfo, calls the business API and refreshes. Also: Deny ends at the
 * callback with `access_denied` (AZ-04), and neither the consent page nor the login page can be
 * framed by another origin (AZ-21, ATK-27).
 *
 * Needs Chromium: see test/helpers/browser.ts for the missing-browser rule (FAIL when `CI=true`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CourseSchoolServer } from '../../examples/course-school/src/app.js';
import { browserOrSkip } from '../helpers/browser.js';
import { startTestServer } from '../helpers/course-school.js';
import { ADA, registerClient, siteOf } from '../helpers/school-flow.js';

let app: CourseSchoolServer;
let callbackServer: Server;
let framer: Server;
let redirectUri: string;
let framerOrigin: string;
let browser: Browser | undefined;
let context: BrowserContext | undefined;
/** Every URL the loopback callback listener received, in order. */
const callbacks: URL[] = [];

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}
function close(server: Server | undefined): Promise<void> {
  if (server === undefined || !server.listening) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

beforeAll(async () => {
  app = await startTestServer();
  // The client's loopback redirect target, as a native app would run it.
  callbackServer = createServer((request, response) => {
    const url = new URL(request.url ?? '/', redirectUri);
    if (url.pathname === '/callback') callbacks.push(url);
    else if (url.pathname !== '/frameable') return void response.writeHead(404).end();
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<p id="done">You may close this window.</p>');
  });
  redirectUri = `http://127.0.0.1:${await listen(callbackServer)}/callback`;
  // Another origin that frames whatever `?src=` names, beside a control frame that may be framed.
  framer = createServer((request, response) => {
    const src = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams.get('src') ?? '';
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        `<iframe id="target" src="${src.replace(/"/g, '&quot;')}"></iframe><iframe id="control" src="${new URL('/frameable', redirectUri).href}"></iframe>`,
      );
  });
  framerOrigin = `http://127.0.0.1:${await listen(framer)}`;
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await close(framer);
  await close(callbackServer);
  await app.close();
});

/** A new tab in the browser context of this file (one person's browser: the session persists). */
async function newPage(skip: (note: string) => void): Promise<Page> {
  browser ??= await browserOrSkip(skip);
  context ??= await browser.newContext();
  const page = await context.newPage();
  // Fail with the step that did not happen rather than the test's timeout.
  page.setDefaultTimeout(8000);
  return page;
}

/** openid-client configured from the issuer's discovery document, for a freshly registered client. */
async function discoverClient(): Promise<client.Configuration> {
  // A real registration over HTTP, as a native app does on first run.
  const clientId = await registerClient(siteOf(app), redirectUri, { client_name: 'Browser E2E app' });
  const config = await client.discovery(new URL(app.issuer), clientId, undefined, client.None(), {
    execute: [client.allowInsecureRequests],
  });
  expect(config.serverMetadata().issuer).toBe(app.issuer);
  return config;
}

async function authorizationUrl(config: client.Configuration, scope: string) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url, verifier, state, nonce };
}

/** Clicks a consent button and waits until the browser has arrived at the loopback callback. */
async function decide(page: Page, button: 'Allow' | 'Deny'): Promise<URL> {
  const before = callbacks.length;
  await page.getByRole('button', { name: button }).click();
  await page
    .waitForURL((u) => u.href.startsWith(redirectUri))
    .catch(async () => {
      throw new Error(
        `the browser did not reach the callback: ${page.url()} shows "${await page.textContent('body')}"`,
      );
    });
  expect(await page.locator('#done').textContent()).toBe('You may close this window.');
  expect(callbacks).toHaveLength(before + 1);
  const arrived = callbacks[before]!;
  expect(arrived.href).toBe(page.url());
  return arrived;
}

describe('the code flow in Chromium, with openid-client (RFC 6749 §4.1, OIDC Core §3.1)', () => {
  it('login → consent → Allow → loopback callback → code exchange → UserInfo → API → refresh', async (ctx) => {
    const page = await newPage((note) => ctx.skip(note));
    const config = await discoverClient();
    const { url, verifier, state, nonce } = await authorizationUrl(
      config,
      'openid profile email courses:read account:read',
    );

    await page.goto(url.href);
    // Not signed in: the library sent the browser to the server's login page.
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByLabel('Email').fill(ADA.email);
    await page.getByLabel('Password').fill(ADA.password);
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/oauth/authorize'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);

    // The library's consent page names the app and what it asks for.
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('allow access?');
    const consent = (await page.textContent('main')) ?? '';
    expect(consent).toContain('Browser E2E app');
    expect(consent).toContain(new URL(redirectUri).host);
    expect(consent).toContain('account:read');
    expect(consent).toContain(`Signed in as ${ADA.email}`);

    const callback = await decide(page, 'Allow');
    expect(callback.searchParams.get('iss')).toBe(app.issuer);
    expect(callback.searchParams.get('state')).toBe(state);

    // openid-client checks state, iss (RFC 9207) and the ID token (signature, aud, nonce).
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: app.issuer, aud: config.clientMetadata().client_id, nonce });
    expect(tokens.scope?.split(' ').sort()).toEqual([
      'account:read',
      'courses:read',
      'email',
      'openid',
      'profile',
    ]);

    const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(userinfo).toMatchObject({ sub: claims.sub, name: 'Ada Lovelace', email: ADA.email });

    // The business API accepts the token for an operation that needs a user.
    const account = await client.fetchProtectedResource(
      config,
      tokens.access_token,
      new URL(`${app.issuer}/api/v1/account`),
      'GET',
    );
    expect(account.status).toBe(200);
    expect(await account.json()).toMatchObject({ email: ADA.email });

    // Refresh without the user; the refresh token rotates and the new access token works.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).toBeTypeOf('string');
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const again = await client.fetchProtectedResource(
      config,
      refreshed.access_token,
      new URL(`${app.issuer}/api/v1/account`),
      'GET',
    );
    expect(again.status).toBe(200);
    await page.close();
  });

  it('Deny ends at the callback with access_denied, state and iss, and no code (AZ-04)', async (ctx) => {
    const page = await newPage((note) => ctx.skip(note));
    const config = await discoverClient();
    const { url, verifier, state } = await authorizationUrl(config, 'openid courses:read');
    await page.goto(url.href);
    if (new URL(page.url()).pathname === '/login') {
      await page.getByLabel('Email').fill(ADA.email);
      await page.getByLabel('Password').fill(ADA.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await page.getByRole('button', { name: 'Deny' }).waitFor();

    const callback = await decide(page, 'Deny');
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('iss')).toBe(app.issuer);
    expect(callback.searchParams.has('code')).toBe(false);
    // openid-client reports the error response as such.
    const error = await client
      .authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(client.AuthorizationResponseError);
    expect((error as client.AuthorizationResponseError).error).toBe('access_denied');
    await page.close();
  });
});

describe('framing from another origin (AZ-21, ATK-27)', () => {
  /**
   * Loads the framer page with `src` in one frame and a frameable control page in another; returns
   * what each frame shows. The control proves the frames did load, so an empty target frame means
   * the browser refused to render it.
   */
  async function framed(page: Page, src: string): Promise<{ target: string; control: string }> {
    await page.goto(`${framerOrigin}/?src=${encodeURIComponent(src)}`, { waitUntil: 'load' });
    const text = async (selector: string) => {
      const frame = await (await page.$(selector))?.contentFrame();
      return frame === null || frame === undefined
        ? ''
        : await frame.evaluate(() => document.body?.textContent ?? '').catch(() => '');
    };
    return { target: await text('#target'), control: await text('#control') };
  }

  it('the consent page is not rendered inside a frame of another origin', async (ctx) => {
    const page = await newPage((note) => ctx.skip(note));
    const config = await discoverClient();
    const { url } = await authorizationUrl(config, 'openid courses:read');
    // Signed in first, so the framed authorization URL would show the consent page.
    await page.goto(url.href);
    if (new URL(page.url()).pathname === '/login') {
      await page.getByLabel('Email').fill(ADA.email);
      await page.getByLabel('Password').fill(ADA.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await page.getByRole('button', { name: 'Allow' }).waitFor();

    const { url: another } = await authorizationUrl(config, 'openid courses:read');
    const shown = await framed(page, another.href);
    expect(shown.control).toContain('You may close this window.');
    expect(shown.target).not.toContain('Allow');
    expect(shown.target).not.toContain('allow access?');
    await page.close();
  });

  it('the login page is not rendered inside a frame of another origin', async (ctx) => {
    const page = await newPage((note) => ctx.skip(note));
    const shown = await framed(page, `${app.issuer}/login`);
    expect(shown.control).toContain('You may close this window.');
    expect(shown.target).not.toContain('Sign in');
    await page.close();
  });
});
