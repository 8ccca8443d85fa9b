/**
 * An application around the MCP TypeScript SDK's OAuth support, as a desktop app writes it: an
 * `OAuthClientProvider` that keeps what the SDK hands it, opens the user's browser (`BROWSER`) in
 * `redirectToAuthorization`, and a loopback listener (RFC 8252 §7.3) that hands each code back.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { OPENER } from './matrix.js';

/** The application's side: stored state, the browser, the loopback listener. */
export class DesktopAppProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  private readonly codes: string[] = [];
  private waiting: ((code: string) => void) | undefined;

  constructor(
    readonly redirectUrl: string,
    private readonly env: Record<string, string>,
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK desktop app',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'client') this.client = undefined;
  }
  /** The user's browser. */
  redirectToAuthorization(url: URL) {
    spawn(OPENER, [url.href], { env: this.env, stdio: 'ignore' });
  }
  /** The loopback listener's side: each code the browser brings back. */
  received(code: string) {
    if (this.waiting !== undefined) this.waiting(code);
    else this.codes.push(code);
    this.waiting = undefined;
  }
  nextCode(): Promise<string> {
    const code = this.codes.shift();
    return code !== undefined ? Promise.resolve(code) : new Promise((resolve) => (this.waiting = resolve));
  }
}

/** The provider and its loopback listener. */
export interface DesktopApp {
  readonly provider: DesktopAppProvider;
  close(): Promise<void>;
}

/** Starts the loopback listener and the provider whose redirect URI it is. */
export async function startDesktopApp(env: Record<string, string>): Promise<DesktopApp> {
  let provider: DesktopAppProvider | undefined;
  const listener = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html' }).end('<p>Signed in.</p>');
    provider?.received(url.searchParams.get('code') ?? '');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;
  provider = new DesktopAppProvider(`http://127.0.0.1:${port}/callback`, env);
  return {
    provider,
    async close() {
      listener.closeAllConnections();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
