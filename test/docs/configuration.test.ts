/**
 * docs/configuration.md states the defaults the library applies, and documents every option: each
 * table marked `<!-- options: prefix -->` is read, its Default column compared with `DEFAULTS`, and
 * its rows with the options of the schema. The library reads its defaults from `DEFAULTS` only.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClientIdMetadataResolver } from '../../src/cimd/resolver.js';
import { DEFAULTS } from '../../src/defaults.js';
import { optionsSchema } from '../../src/options.js';
import { startHttpsServer, type TestHttpsServer } from '../helpers/servers.js';
import { createTestCertificate, type TestCertificate } from '../helpers/tls.js';

const guide = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

/** Default cells by option path (`tokens.codeTtlSeconds`, `resources[].scopes`, `issuer`). */
function documentedDefaults(markdown: string): Map<string, string> {
  const rows = new Map<string, string>();
  const lines = markdown.split('\n');
  lines.forEach((line, index) => {
    const marker = /^<!-- options(?:: ([\w.[\]]+))? -->$/.exec(line);
    if (marker === null) return;
    const prefix = marker[1] === undefined ? '' : `${marker[1]}.`;
    for (const row of lines.slice(index + 3)) {
      const cells = /^\| `(\w+)` \| (.*?) \| /.exec(row);
      if (cells === null) break;
      rows.set(`${prefix}${cells[1]}`, cells[2]!);
    }
  });
  return rows;
}

/** Every leaf of `DEFAULTS`, by path. */
function leaves(value: unknown, path = ''): [string, unknown][] {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return Object.entries(value).flatMap(([key, inner]) =>
      leaves(inner, path === '' ? key : `${path}.${key}`),
    );
  }
  return [[path, value]];
}

/** How the guide writes a default: in backquotes, a number optionally followed by its gloss. */
function written(value: unknown): string {
  return `\`${Array.isArray(value) ? JSON.stringify(value) : String(value)}\``;
}

interface SchemaNode {
  _zod: {
    def: { type: string; innerType?: SchemaNode; element?: SchemaNode; shape?: Record<string, SchemaNode> };
  };
}

/** The schema under defaults, optionality and read-only wrappers. */
function unwrap(node: SchemaNode): SchemaNode {
  const { def } = node._zod;
  return def.innerType !== undefined && ['default', 'prefault', 'optional', 'readonly'].includes(def.type)
    ? unwrap(def.innerType)
    : node;
}

/** Every option path the schema defines: groups (objects) recursed, lists of objects as `name[]`. */
function optionPaths(node: SchemaNode, prefix = ''): string[] {
  const shape = unwrap(node)._zod.def.shape ?? {};
  return Object.entries(shape).flatMap(([key, value]) => {
    const path = `${prefix}${key}`;
    const inner = unwrap(value)._zod.def;
    if (inner.type === 'object') return [path, ...optionPaths(value, `${path}.`)];
    const element = inner.element === undefined ? undefined : unwrap(inner.element)._zod.def;
    if (inner.type === 'array' && element?.type === 'object' && prefix === '') {
      return [path, ...optionPaths(inner.element!, `${path}[].`)];
    }
    return [path];
  });
}

describe('docs/configuration.md', () => {
  const rows = documentedDefaults(guide);

  it('states every default of DEFAULTS, as the library applies it', () => {
    const wrong = leaves(DEFAULTS)
      .filter(([path, value]) => !(rows.get(path) ?? '').startsWith(written(value)))
      .map(
        ([path, value]) =>
          `${path}: the guide says ${rows.get(path) ?? '(no row)'}, DEFAULTS ${written(value)}`,
      );
    expect(wrong).toEqual([]);
  });

  it('documents every option, in the table of its group', () => {
    const groups = new Set([...rows.keys()].map((path) => path.slice(0, path.lastIndexOf('.') + 1)));
    const missing = optionPaths(optionsSchema as unknown as SchemaNode).filter(
      (path) => !rows.has(path) && !groups.has(`${path}.`) && !groups.has(`${path}[].`),
    );
    expect(missing).toEqual([]);
  });

  it('documents no option the schema does not have', () => {
    const known = new Set(optionPaths(optionsSchema as unknown as SchemaNode));
    // Introspection callers are described in the row of `introspection.callers`.
    expect([...rows.keys()].filter((path) => !known.has(path))).toEqual([]);
  });
});

describe('the metadata-document fetcher on its own applies the defaults of DEFAULTS', () => {
  let certificate: TestCertificate;
  let server: TestHttpsServer;
  beforeAll(async () => {
    certificate = createTestCertificate(['client.test']);
    server = await startHttpsServer(certificate);
  });
  afterAll(() => server.close());

  it('sends the default User-Agent, so client operators can recognise its requests', async () => {
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
    expect(userAgent).toBe(DEFAULTS.clientIdMetadataDocuments.userAgent);
  });
});
