/**
 * A throwaway TLS certificate for local HTTPS servers, made with the `openssl` CLI at test time
 * (EC P-256: fast to generate on a shared machine). Tests trust it through the fetcher's `ca`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  readonly key: string;
  readonly cert: string;
}

/** A self-signed certificate valid for `dnsNames` and `ipAddresses`, for one day. */
export function createTestCertificate(
  dnsNames: readonly string[],
  ipAddresses: readonly string[] = [],
): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-tls-'));
  try {
    const san = [...dnsNames.map((n) => `DNS:${n}`), ...ipAddresses.map((a) => `IP:${a}`)].join(',');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        `/CN=${dnsNames[0] ?? 'localhost'}`,
        '-addext',
        `subjectAltName=${san}`,
      ],
      { stdio: 'pipe' },
    );
    return {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
  } catch (error) {
    throw new Error(`the openssl CLI is needed to make a test certificate: ${String(error)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
