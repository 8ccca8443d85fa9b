/**
 * Client ID Metadata Documents through `createAuthorizationServer`: the option turns the resolver
 * on (MD-08), is validated at start-up, and `https` client ids then resolve through documents.
 */
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/options.js';
import { createAuthorizationServer } from '../../src/server.js';
import { memoryStorage } from '../../src/storage/memory.js';
import { fixtures } from '../../src/testing/index.js';
import { CLIENT_ID, scriptedFetcher, validDocument } from '../helpers/metadata-documents.js';
import { seedGrant } from '../helpers/seed-grant.js';

const NOW = 1_800_000_000;
const issuer = 'http://127.0.0.1:4000';

async function metadata(enabled: boolean | undefined) {
  const server = await createAuthorizationServer({
    issuer,
    storage: memoryStorage(),
    ...(enabled === undefined ? {} : { clientIdMetadataDocuments: { enabled } }),
  });
  const response = await server.handle({
    method: 'GET',
    url: '/.well-known/oauth-authorization-server',
    headers: {},
  });
  await server.close();
  return JSON.parse(response?.body ?? '{}') as Record<string, unknown>;
}

describe('MD-08 client_id_metadata_document_supported follows the option', () => {
  it('is true when enabled', async () => {
    expect((await metadata(true)).client_id_metadata_document_supported).toBe(true);
  });
  it('is not true when disabled or omitted', async () => {
    expect((await metadata(false)).client_id_metadata_document_supported).not.toBe(true);
    expect((await metadata(undefined)).client_id_metadata_document_supported).not.toBe(true);
  });
});

describe('clientIdMetadataDocuments options', () => {
  it.each([
    [{ maxBytes: 10 }, 'options.clientIdMetadataDocuments.maxBytes'],
    [{ timeoutMs: 0 }, 'options.clientIdMetadataDocuments.timeoutMs'],
    [
      { allowSpecialUseAddresses: ['not-an-address'] },
      'options.clientIdMetadataDocuments.allowSpecialUseAddresses.0',
    ],
    [{ allowedHosts: ['https://client.example'] }, 'options.clientIdMetadataDocuments.allowedHosts.0'],
    [{ cache: { minTtlSeconds: 600, maxTtlSeconds: 60 } }, 'minTtlSeconds must not exceed maxTtlSeconds'],
    [{ fetcher: 'https' }, 'options.clientIdMetadataDocuments.fetcher'],
    [{ unknown: true }, 'options.clientIdMetadataDocuments'],
  ])('refuses %j at start-up', async (cimd, message) => {
    const starting = createAuthorizationServer({
      issuer,
      storage: memoryStorage(),
      clientIdMetadataDocuments: cimd as never,
    });
    await expect(starting).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(starting).rejects.toThrow(message);
  });
});

describe('https client ids resolve through their documents when enabled', () => {
  async function appsOfUser(enabled: boolean) {
    const storage = memoryStorage();
    const script = scriptedFetcher();
    script.serve(CLIENT_ID, { body: validDocument() });
    const grant = fixtures.grant({ clientId: CLIENT_ID, userId: 'user-1' });
    await seedGrant(storage, grant, fixtures.accessToken(grant));
    const server = await createAuthorizationServer({
      issuer,
      storage,
      clock: () => NOW * 1000,
      clientIdMetadataDocuments: { enabled, fetcher: script.fetcher },
    });
    const apps = await server.listGrants('user-1');
    await server.close();
    return { apps, fetches: script.fetches };
  }

  it('names the app from its metadata document', async () => {
    const { apps, fetches } = await appsOfUser(true);
    expect(apps).toEqual([expect.objectContaining({ clientId: CLIENT_ID, clientName: 'Example Agent' })]);
    expect(fetches).toEqual([CLIENT_ID]);
  });

  it('never fetches when disabled', async () => {
    const { apps, fetches } = await appsOfUser(false);
    expect(apps).toEqual([expect.objectContaining({ clientId: CLIENT_ID, clientName: undefined })]);
    expect(fetches).toEqual([]);
  });
});
