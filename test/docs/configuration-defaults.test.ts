import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { options } from '../../docs/snippets/configuration-defaults.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from '../../src/cimd/node-fetcher.js';
import { CIMD_DEFAULTS, createClientIdMetadataResolver } from '../../src/cimd/resolver.js';
import { resolveConfig, type ServerConfig } from '../../src/config.js';
import { startHttpsServer, type TestHttpsServer } from '../helpers/servers.js';
import { createTestCertificate, type TestCertificate } from '../helpers/tls.js';

/** The parts of a resolved configuration that plain option values decide. */
function defaultsOf(config: ServerConfig) {
  const { policy: _policy, ...registration } = config.registration;
  return {
    paths: config.paths,
    urls: config.urls,
    resources: config.resources,
    registration,
    clientSecretBasic: config.clientSecretBasic,
    tokens: config.tokens,
    keys: config.keys,
    introspection: config.introspection,
    consentRemember: config.consent.remember,
    cimdEnabled: config.cimdEnabled,
    metadata: config.metadata,
    maxBodyBytes: config.maxBodyBytes,
    housekeepingIntervalSeconds: config.housekeepingIntervalSeconds,
    clientCacheSeconds: config.clientCacheSeconds,
    tokenAuthMethods: config.tokenAuthMethods,
  };
}

describe('docs/configuration.md', () => {
  it('states the defaults the server applies', async () => {
    const spelledOut = await resolveConfig(options);
    const implicit = await resolveConfig({ issuer: options.issuer, storage: options.storage });
    expect(defaultsOf(spelledOut)).toEqual(defaultsOf(implicit));
  });

  describe('states the defaults of clientIdMetadataDocuments', () => {
    const documented = options.clientIdMetadataDocuments;
    let certificate: TestCertificate;
    let server: TestHttpsServer;
    beforeAll(async () => {
      certificate = createTestCertificate(['client.test']);
      server = await startHttpsServer(certificate);
    });
    afterAll(() => server.close());

    it('of the resolver: time budget, size cap, redirect URIs and cache bounds', () => {
      const { enabled: _enabled, connectTimeoutMs: _c, userAgent: _u, cache, ...limits } = documented;
      expect({ ...limits, ...cache }).toEqual(CIMD_DEFAULTS);
    });

    it('of the default fetcher: connect timeout and User-Agent', async () => {
      expect(documented.connectTimeoutMs).toBe(DEFAULT_CONNECT_TIMEOUT_MS);
      let userAgent: string | undefined;
      const clientId = `https://client.test:${server.port}/client.json`;
      server.route('/client.json', (request, response) => {
        userAgent = request.headers['user-agent'];
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            client_id: clientId,
            client_name: 'Defaults',
            redirect_uris: ['http://127.0.0.1/callback'],
          }),
        );
      });
      const resolve = createClientIdMetadataResolver({
        ca: certificate.cert,
        lookup: async () => [{ address: '127.0.0.1', family: 4 }],
        allowSpecialUseAddresses: ['127.0.0.1'],
      });
      await resolve(clientId);
      expect(userAgent).toBe(documented.userAgent);
    });
  });
});
