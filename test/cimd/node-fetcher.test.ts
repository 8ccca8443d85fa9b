/**
 * The default fetcher against real local servers: a TLS server with a throwaway certificate
 * (trusted through `ca`) and canary listeners that must never see a connection from a refused
 * fetch. Host names are answered by an injected `lookup`; the TLS server's loopback address is
 * exempted with `allowSpecialUseAddresses` where a test needs a "public" address.
 */
import { createServer as createNetServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkClientIdUrl } from '../../src/cimd/client-id.js';
import type { ClientMetadataDocumentError } from '../../src/cimd/errors.js';
import type { HostLookup, ResolvedAddress } from '../../src/cimd/fetcher.js';
import { createNodeMetadataFetcher } from '../../src/cimd/node-fetcher.js';
import {
  type ClientIdMetadataResolverOptions,
  createClientIdMetadataResolver,
} from '../../src/cimd/resolver.js';
import { refusal } from '../helpers/metadata-documents.js';
import { type Canary, startCanary, startHttpsServer, type TestHttpsServer } from '../helpers/servers.js';
import { createTestCertificate, type TestCertificate } from '../helpers/tls.js';

let certificate: TestCertificate;
let server: TestHttpsServer;
let canary: Canary;
let canary6: Canary | undefined;
let port: number;

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

/** A lookup answering from a table; unknown names fail like NXDOMAIN. */
function table(entries: Record<string, readonly ResolvedAddress[]>): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    const answer = entries[hostname];
    if (answer === undefined) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answer;
  };
  return Object.assign(lookup, { calls });
}

function documentFor(clientId: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    client_id: clientId,
    client_name: 'Local Test Client',
    redirect_uris: ['http://127.0.0.1/callback'],
    token_endpoint_auth_method: 'none',
    ...extra,
  });
}

function serveDocument(path: string, host: string, headers: Record<string, string> = {}): string {
  const clientId = `https://${host}:${port}${path}`;
  server.route(path, (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(documentFor(clientId));
  });
  return clientId;
}

function resolver(options: ClientIdMetadataResolverOptions) {
  return createClientIdMetadataResolver({ ca: certificate.cert, ...options });
}

beforeAll(async () => {
  certificate = createTestCertificate(['client.test', 'rebind.test', 'localhost'], ['127.0.0.1']);
  server = await startHttpsServer(certificate, '127.0.0.1');
  port = server.port;
  // Every refused loopback target uses the TLS server's port, so a leak would reach a listener.
  canary = await startCanary('127.0.0.2', port);
  canary6 = await startCanary('::1', port).catch(() => undefined);
});

afterAll(async () => {
  await server.close();
  await canary.close();
  await canary6?.close();
});

describe('CIMD-01 fetching a metadata document', () => {
  it('fetches the document over TLS with Accept: application/json and builds a public client', async () => {
    let accept: string | undefined;
    const clientId = `https://client.test:${port}/meta.json`;
    server.route('/meta.json', (request, response) => {
      accept = request.headers.accept;
      response.writeHead(200, { 'content-type': 'application/json' }).end(documentFor(clientId));
    });
    const resolve = resolver({
      lookup: table({ 'client.test': [v4('127.0.0.1')] }),
      allowSpecialUseAddresses: ['127.0.0.1'],
    });
    const client = await resolve(clientId);
    expect(accept).toBe('application/json');
    expect(client).toMatchObject({
      clientId,
      origin: 'metadata_document',
      metadata: {
        client_name: 'Local Test Client',
        redirect_uris: ['http://127.0.0.1/callback'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    });
    expect(client?.secretHash).toBeUndefined();
  });

  it('verifies the certificate against the client_id host even though it connects by pinned IP', async () => {
    // The certificate names client.test, rebind.test and localhost, not other.test.
    const clientId = serveDocument('/other.json', 'other.test');
    const resolve = resolver({
      lookup: table({ 'other.test': [v4('127.0.0.1')] }),
      allowSpecialUseAddresses: ['127.0.0.1'],
    });
    const error = await refusal(resolve(clientId));
    expect(error.problem).toBe('fetch_failed');
    expect(error.reason).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('refuses a certificate no trusted CA issued', async () => {
    const clientId = serveDocument('/untrusted.json', 'client.test');
    const resolve = createClientIdMetadataResolver({
      lookup: table({ 'client.test': [v4('127.0.0.1')] }),
      allowSpecialUseAddresses: ['127.0.0.1'],
    });
    const error = await refusal(resolve(clientId));
    expect(error.problem).toBe('fetch_failed');
    expect(error.reason).toContain('TLS certificate was not accepted');
  });
});

describe('CIMD-07 / ATK-37 special-use targets are refused before any connection', () => {
  const cases: [string, () => string, ClientMetadataDocumentError['problem']][] = [
    ['loopback IPv4 literal', () => `https://127.0.0.1:${port}/x`, 'forbidden_address'],
    ['localhost through the system resolver', () => `https://localhost:${port}/x`, 'forbidden_address'],
    ['loopback IPv6 literal', () => `https://[::1]:${port}/x`, 'forbidden_address'],
    ['cloud metadata address', () => 'https://169.254.169.254/latest/meta-data/x', 'forbidden_address'],
    ['private IPv4 literal', () => 'https://10.0.0.1/x', 'forbidden_address'],
    ['unique-local IPv6 literal', () => 'https://[fd00::1]/x', 'forbidden_address'],
    ['IPv4-mapped private address', () => 'https://[::ffff:10.0.0.1]/x', 'forbidden_address'],
    ['IPv4-mapped loopback address', () => `https://[::ffff:127.0.0.2]:${port}/x`, 'forbidden_address'],
    ['decimal integer host', () => `https://2130706433:${port}/x`, 'invalid_client_id'],
    ['hexadecimal host', () => `https://0x7f.1:${port}/x`, 'invalid_client_id'],
    ['shortened dotted host', () => `https://127.1:${port}/x`, 'invalid_client_id'],
    ['name resolving to 192.168.x', () => `https://intranet.test:${port}/x`, 'forbidden_address'],
    [
      'name with one private answer among public ones',
      () => `https://mixed.test:${port}/x`,
      'forbidden_address',
    ],
    [
      'name resolving to NAT64 of a private address',
      () => `https://nat64.test:${port}/x`,
      'forbidden_address',
    ],
    ['name resolving to another loopback address', () => `https://loop.test:${port}/x`, 'forbidden_address'],
    ['name resolving to loopback IPv6', () => `https://loop6.test:${port}/x`, 'forbidden_address'],
  ];
  const lookup = table({
    'intranet.test': [v4('192.168.1.20')],
    'mixed.test': [v4('93.184.215.14'), v4('10.1.2.3')],
    'nat64.test': [v6('64:ff9b::a00:1')],
    'loop.test': [v4('127.0.0.2')],
    'loop6.test': [v6('::1')],
  });

  it.each(cases)('refuses a %s', async (_name, clientId, problem) => {
    const before = server.connections();
    const resolve = createClientIdMetadataResolver({
      ca: certificate.cert,
      ...(clientId().includes('.test') ? { lookup } : {}),
    });
    const error = await refusal(resolve(clientId()));
    expect(error.problem).toBe(problem);
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_client');
    expect(server.connections()).toBe(before);
  });

  it('left the canaries untouched', () => {
    expect(canary.accepted()).toBe(0);
    expect(canary6?.accepted() ?? 0).toBe(0);
  });
});

describe('ATK-38 DNS rebinding', () => {
  it('connects to the vetted address: a lookup answering public, then private, is asked once', async () => {
    const clientId = serveDocument('/rebind.json', 'rebind.test');
    let calls = 0;
    // 127.0.0.1 stands in for a public address here; 127.0.0.2 (the canary) for the private one.
    const lookup: HostLookup = async () => (++calls === 1 ? [v4('127.0.0.1')] : [v4('127.0.0.2')]);
    const before = server.connections();
    const fetcher = createNodeMetadataFetcher({
      lookup,
      ca: certificate.cert,
      allowSpecialUseAddresses: ['127.0.0.1'],
    });
    const response = await fetcher({
      target: checkClientIdUrl(clientId, undefined, []),
      maxBytes: 5120,
      timeoutMs: 3000,
    });
    expect(response.status).toBe(200);
    expect(response.remoteAddress).toBe('127.0.0.1');
    expect(calls).toBe(1);
    expect(server.connections()).toBe(before + 1);
    expect(canary.accepted()).toBe(0);
  });

  it('refuses when the first answer is already private', async () => {
    const lookup: HostLookup = async () => [v4('127.0.0.2')];
    const resolve = resolver({ lookup, allowSpecialUseAddresses: ['127.0.0.1'] });
    const error = await refusal(resolve(`https://rebind.test:${port}/rebind.json`));
    expect(error.problem).toBe('forbidden_address');
    expect(canary.accepted()).toBe(0);
  });
});

describe('CIMD-03 / ATK-39 statuses other than 200', () => {
  it('does not follow a 302 to an internal host', async () => {
    server.route('/moved.json', (_request, response) => {
      response.writeHead(302, { location: `https://127.0.0.2:${port}/internal` }).end();
    });
    const resolve = resolver({
      lookup: table({ 'client.test': [v4('127.0.0.1')] }),
      allowSpecialUseAddresses: ['127.0.0.1'],
    });
    const error = await refusal(resolve(`https://client.test:${port}/moved.json`));
    expect(error.problem).toBe('bad_status');
    expect(error.reason).toContain('302');
    expect(error.reason).toContain('not followed');
    expect(canary.accepted()).toBe(0);
    expect(server.requests.filter((p) => p === '/internal')).toEqual([]);
  });

  it.each([301, 307, 308, 204, 404, 500])('aborts on HTTP %i', async (status) => {
    server.route(`/status-${status}.json`, (_request, response) => {
      response.writeHead(status, { location: '/meta.json', 'content-type': 'application/json' }).end();
    });
    const resolve = resolver({
      lookup: table({ 'client.test': [v4('127.0.0.1')] }),
      allowSpecialUseAddresses: ['127.0.0.1'],
    });
    const error = await refusal(resolve(`https://client.test:${port}/status-${status}.json`));
    expect(error.problem).toBe('bad_status');
    expect(error.reason).toContain(String(status));
  });
});

describe('CIMD-08 / ATK-40 size and time limits', () => {
  const lookup = table({ 'client.test': [v4('127.0.0.1')] });
  const base = { lookup, allowSpecialUseAddresses: ['127.0.0.1'] };

  it('refuses a 10 MB body announced by Content-Length without reading it', async () => {
    let written = 0;
    let closed = false;
    let onClose = () => {};
    const connectionClosed = new Promise<void>((resolve) => {
      onClose = resolve;
    });
    server.route('/huge.json', (_request, response) => {
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(10 * 1024 * 1024),
      });
      response.on('close', () => {
        closed = true;
        onClose();
      });
      const chunk = new Uint8Array(64 * 1024).fill(0x20);
      const pump = () => {
        while (!closed && written < 10 * 1024 * 1024) {
          written += chunk.byteLength;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
      };
      pump();
    });
    const error = await refusal(resolver(base)(`https://client.test:${port}/huge.json`));
    expect(error.problem).toBe('too_large');
    // The fetcher hung up: the server sees its connection close before it wrote the 10 MB.
    await connectionClosed;
    expect(written).toBeLessThan(10 * 1024 * 1024);
  });

  /** A route that writes `chunk` every `everyMs` until the fetcher hangs up; resolves on that close. */
  function endless(path: string, chunk: string, everyMs: number): Promise<void> {
    return new Promise((resolve) => {
      server.route(path, (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => response.write(chunk), everyMs);
        response.on('close', () => {
          clearInterval(timer);
          resolve();
        });
      });
    });
  }

  it('cuts a chunked body without length at the cap', async () => {
    const connectionClosed = endless('/endless.json', 'x'.repeat(1024), 5);
    // A time budget far above what 5 KiB takes: only the size cap can end this fetch early.
    const error = await refusal(
      resolver({ ...base, maxBytes: 5120, timeoutMs: 10_000 })(`https://client.test:${port}/endless.json`),
    );
    expect(error.problem).toBe('too_large');
    expect(error.reason).toContain('5120 bytes');
    await connectionClosed;
  });

  it('aborts a drip that never ends at the total time budget, though bytes keep arriving', async () => {
    const connectionClosed = endless('/drip.json', ' ', 100);
    const error = await refusal(
      resolver({ ...base, timeoutMs: 500, connectTimeoutMs: 400 })(`https://client.test:${port}/drip.json`),
    );
    expect(error.problem).toBe('timeout');
    // The connection was up: the total budget, not the connect timeout, ended it.
    expect(error.reason).toContain('not received within 500 ms');
    await connectionClosed;
  });

  it('gives up on a peer that accepts TCP but never completes TLS, at the connect timeout', async () => {
    const held = new Set<Socket>();
    const silent = createNetServer((socket) => {
      held.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.3', () => r()));
    const silentPort = (silent.address() as { port: number }).port;
    try {
      const error = await refusal(
        createClientIdMetadataResolver({
          ca: certificate.cert,
          lookup: table({ 'client.test': [v4('127.0.0.3')] }),
          allowSpecialUseAddresses: ['127.0.0.3'],
          connectTimeoutMs: 300,
          timeoutMs: 5000,
        })(`https://client.test:${silentPort}/meta.json`),
      );
      // The connect timeout (300 ms), not the total budget (5 s), ended it.
      expect(error.problem).toBe('timeout');
      expect(error.reason).toContain('connection was not established within 300 ms');
      expect(held.size).toBe(1);
    } finally {
      for (const s of held) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('refuses a compressed body instead of inflating it', async () => {
    server.route('/gzip.json', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end('xx');
    });
    const error = await refusal(resolver(base)(`https://client.test:${port}/gzip.json`));
    expect(error.problem).toBe('invalid_document');
    expect(error.reason).toContain('compressed');
  });
});
