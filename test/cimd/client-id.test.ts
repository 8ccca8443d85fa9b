/**
 * CIMD-02: client_id URLs that break draft §3 are refused from the raw string, before any fetch.
 */
import { describe, expect, it, vi } from 'vitest';
import type { MetadataFetcher } from '../../src/cimd/fetcher.js';
import { createClientIdMetadataResolver } from '../../src/cimd/resolver.js';
import { refusal } from '../helpers/metadata-documents.js';

function spyFetcher() {
  return vi.fn<MetadataFetcher>(async ({ target }) => ({
    status: 200,
    contentType: 'application/json',
    cacheControl: undefined,
    body: new TextEncoder().encode(
      JSON.stringify({
        client_id: target.clientId,
        client_name: 'x',
        redirect_uris: ['http://127.0.0.1/cb'],
      }),
    ),
  }));
}

describe('CIMD-02 client_id URL rules (draft §3), checked on the raw string', () => {
  const refused: [string, string][] = [
    ['no path', 'https://client.example'],
    ['a root path only', 'https://client.example/'],
    ['a fragment', 'https://client.example/meta.json#x'],
    ['an empty fragment', 'https://client.example/meta.json#'],
    ['user info', 'https://user@client.example/meta.json'],
    ['user and password', 'https://user:pw@client.example/meta.json'],
    ['an @ that hides the host', 'https://client.example:1@evil.example/meta.json'],
    ['a dot segment', 'https://client.example/./meta.json'],
    ['a double-dot segment', 'https://client.example/a/../meta.json'],
    ['a trailing double-dot segment', 'https://client.example/a/..'],
    ['an encoded dot segment', 'https://client.example/a/%2e%2E/meta.json'],
    ['a half-encoded dot segment', 'https://client.example/a/.%2e/meta.json'],
    ['http', 'http://client.example/meta.json'],
    ['upper-case scheme', 'HTTPS://client.example/meta.json'],
    ['upper-case host', 'https://Client.Example/meta.json'],
    ['an empty port', 'https://client.example:/meta.json'],
    ['port 0', 'https://client.example:0/meta.json'],
    ['port 65536', 'https://client.example:65536/meta.json'],
    ['a leading-zero port', 'https://client.example:0443/meta.json'],
    ['a non-numeric port', 'https://client.example:abc/meta.json'],
    ['the default port spelled out', 'https://client.example:443/meta.json'],
    ['a decimal integer host', 'https://2130706433/meta.json'],
    ['a hex host', 'https://0x7f.1/meta.json'],
    ['an octal host', 'https://017.0.0.1/meta.json'],
    ['a short dotted host', 'https://127.1/meta.json'],
    ['a fullwidth host', 'https://１２７.０.０.１/meta.json'],
    ['an IDN host that is not punycode', 'https://cliént.example/meta.json'],
    ['a percent-encoded host', 'https://%63lient.example/meta.json'],
    ['a trailing dot in the host', 'https://client.example./meta.json'],
    ['an empty label', 'https://client..example/meta.json'],
    ['a TAB', 'https://client.example/me\tta.json'],
    ['a line feed', 'https://client.example/meta.json\n'],
    ['a space', 'https://client.example/meta .json'],
    ['a backslash', 'https://client.example\\@evil.example/meta.json'],
    ['a zone identifier', 'https://[fe80::1%25eth0]/meta.json'],
    ['a bad IPv6 literal', 'https://[1:2:3]/meta.json'],
    ['bad percent-encoding', 'https://client.example/m%zzeta.json'],
    ['a very long URL', `https://client.example/${'a'.repeat(2100)}`],
  ];

  it.each(refused)('refuses a client_id with %s, without fetching', async (_name, clientId) => {
    const fetcher = spyFetcher();
    const error = await refusal(createClientIdMetadataResolver({ fetcher })(clientId));
    expect(error.problem).toBe('invalid_client_id');
    expect(error.description).toMatch(
      /^the client's metadata document could not be used: the client_id URL /,
    );
    expect(fetcher).not.toHaveBeenCalled();
  });

  it.each([
    ['a path', 'https://client.example/meta.json'],
    ['a port', 'https://client.example:8443/oauth/client'],
    ['a query (discouraged, allowed)', 'https://client.example/client?v=2'],
    ['a public IPv4 literal', 'https://93.184.215.14/client.json'],
    ['a public IPv6 literal', 'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/client.json'],
  ])('accepts a client_id with %s', async (_name, clientId) => {
    const fetcher = spyFetcher();
    const client = await createClientIdMetadataResolver({ fetcher })(clientId);
    expect(client?.clientId).toBe(clientId);
    expect(fetcher).toHaveBeenCalledTimes(1);
  });

  it('returns null for client ids that are not URLs (generated ids, left to storage)', async () => {
    const fetcher = spyFetcher();
    const resolve = createClientIdMetadataResolver({ fetcher });
    expect(await resolve('k2Jd9s-generated_id')).toBeNull();
    expect(await resolve('client.example/meta.json')).toBeNull();
    expect(fetcher).not.toHaveBeenCalled();
  });
});

describe('allowedHosts', () => {
  const resolve = (clientId: string, fetcher = spyFetcher()) =>
    createClientIdMetadataResolver({ fetcher, allowedHosts: ['apps.example', '*.trusted.example'] })(
      clientId,
    );

  it('accepts an exact host and names below a wildcard', async () => {
    await expect(resolve('https://apps.example/c.json')).resolves.not.toBeNull();
    await expect(resolve('https://a.b.trusted.example/c.json')).resolves.not.toBeNull();
  });

  it.each([
    'https://other.example/c.json',
    'https://trusted.example/c.json',
    'https://eviltrusted.example/c.json',
    'https://apps.example.evil.example/c.json',
  ])('refuses %s without fetching', async (clientId) => {
    const fetcher = spyFetcher();
    const error = await refusal(resolve(clientId, fetcher));
    expect(error.problem).toBe('host_not_allowed');
    expect(fetcher).not.toHaveBeenCalled();
  });
});

describe('special-use IP literals are refused even with a custom fetcher', () => {
  it.each(['https://10.0.0.1/c.json', 'https://[::1]/c.json', 'https://169.254.169.254/latest/meta-data/c'])(
    'refuses %s',
    async (clientId) => {
      const fetcher = spyFetcher();
      const error = await refusal(createClientIdMetadataResolver({ fetcher })(clientId));
      expect(error.problem).toBe('forbidden_address');
      expect(fetcher).not.toHaveBeenCalled();
    },
  );
});
