/**
 * Compact JWS signing on the token hot paths (RFC 7515 §7.1). Where the runtime offers
 * `node:crypto` (Node, Bun, Deno, Workers with `nodejs_compat`) and its signatures check out, the
 * signature is made synchronously with a `KeyObject`; elsewhere with Web Crypto. Measured on the
 * reference machine: an ES256 token signed this way costs about a quarter of the CPU of jose's
 * `SignJWT`, which goes through Web Crypto's thread pool (`npx tsx bench/micro/jws-sign.ts`
 * compares the two signers). Keys are generated, imported and published with jose, and every token
 * is verified with jose in the tests.
 *
 * `node:crypto` is a compatibility layer outside Node, and layers differ: workerd's (Workers with
 * `nodejs_compat`) refuses a `KeyObject` together with `dsaEncoding`, the form ES256 needs for a
 * JOSE signature. So each key's `node:crypto` signer signs a probe once, when the key is loaded,
 * and is used only when Web Crypto verifies that signature; otherwise the key signs with Web
 * Crypto, which every runtime implements the same way.
 * @module
 */
import { builtinModule } from '../core/builtins.js';
import { base64url, base64urlText } from '../core/crypto.js';

type NodeSign = (algorithm: string | null, data: Uint8Array, key: unknown) => Uint8Array;
/** The part of `node:crypto` the signer uses. */
export type NodeCryptoForSigning = {
  sign: NodeSign;
  createPrivateKey(input: { key: Record<string, unknown>; format: 'jwk' }): unknown;
};

const nodeCrypto = builtinModule<NodeCryptoForSigning>('node:crypto');
const encoder = new TextEncoder();

/** Signs the JWS signing input; resolves to the raw signature (JOSE encoding for ECDSA). */
export type JwsSigner = (signingInput: Uint8Array<ArrayBuffer>) => Uint8Array | Promise<Uint8Array>;

/** Which implementation a {@link JwsSigner} uses, and why not `node:crypto` when it does not. */
export interface JwsSignerChoice {
  readonly sign: JwsSigner;
  readonly via: 'node:crypto' | 'web-crypto';
  /** Why `node:crypto` was not used although the runtime offers it (absent otherwise). */
  readonly refused?: string;
}

const PROBE = encoder.encode('portcullis.jws-signer-probe');

function webCryptoParams(alg: 'RS256' | 'ES256'): EcdsaParams | AlgorithmIdentifier {
  return alg === 'ES256' ? { name: 'ECDSA', hash: 'SHA-256' } : { name: 'RSASSA-PKCS1-v1_5' };
}

/** A signer on `node:crypto`, or the reason the runtime's `node:crypto` cannot sign for this key. */
async function nodeCryptoSigner(
  crypto: NodeCryptoForSigning,
  alg: 'RS256' | 'ES256',
  privateJwk: Record<string, unknown>,
  publicKey: CryptoKey,
): Promise<JwsSigner | string> {
  let probe: Uint8Array;
  let sign: (input: Uint8Array<ArrayBuffer>) => Uint8Array;
  try {
    const keyObject = crypto.createPrivateKey({ key: privateJwk, format: 'jwk' });
    // ECDSA in JOSE is the raw r || s (RFC 7518 §3.4), not node's default DER.
    const key = alg === 'ES256' ? { key: keyObject, dsaEncoding: 'ieee-p1363' } : keyObject;
    const nodeSign = crypto.sign;
    sign = (input) => nodeSign('sha256', input, key);
    probe = sign(PROBE);
  } catch (error) {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
  const bytes = new Uint8Array(probe);
  const valid = await globalThis.crypto.subtle
    .verify(webCryptoParams(alg), publicKey, bytes, PROBE)
    .catch(() => false);
  return valid ? sign : `its ${alg} signature (${bytes.byteLength} bytes) does not verify with Web Crypto`;
}

/**
 * Builds the signer for one private key: `node:crypto` where the runtime offers it and its
 * signature of a probe verifies with Web Crypto, Web Crypto otherwise.
 *
 * @param alg - the JWS algorithm of the key
 * @param privateJwk - the private key as a JWK (for `node:crypto`)
 * @param keys - the same key pair imported into Web Crypto (jose's `importJWK`)
 * @param runtimeCrypto - the runtime's `node:crypto` (`null` where it has none); tests replace it
 * @returns the signer and which implementation it uses
 */
export async function createJwsSigner(
  alg: 'RS256' | 'ES256',
  privateJwk: Record<string, unknown>,
  keys: { readonly privateKey: CryptoKey; readonly publicKey: CryptoKey },
  runtimeCrypto: NodeCryptoForSigning | null = nodeCrypto ?? null,
): Promise<JwsSignerChoice> {
  let refused: string | undefined;
  if (runtimeCrypto !== null) {
    const node = await nodeCryptoSigner(runtimeCrypto, alg, privateJwk, keys.publicKey);
    if (typeof node === 'function') return { sign: node, via: 'node:crypto' };
    refused = node;
  }
  const params = webCryptoParams(alg);
  const sign: JwsSigner = async (input) =>
    new Uint8Array(await crypto.subtle.sign(params, keys.privateKey, input));
  return refused === undefined ? { sign, via: 'web-crypto' } : { sign, via: 'web-crypto', refused };
}

/** The parts of a signing key the JWS encoder needs. */
export interface JwsKey {
  readonly alg: string;
  readonly kid: string;
  readonly sign: JwsSigner;
}

const headerCache = new Map<string, string>();

function encodedHeader(key: JwsKey, typ: string): string {
  const cacheKey = `${key.kid}\u0000${typ}`;
  let header = headerCache.get(cacheKey);
  if (header === undefined) {
    header = base64urlText(JSON.stringify({ alg: key.alg, kid: key.kid, typ }));
    if (headerCache.size > 256) headerCache.clear();
    headerCache.set(cacheKey, header);
  }
  return header;
}

/** Serialises and signs a JWT in compact form. */
export async function signJwt(
  key: JwsKey,
  typ: string,
  payload: Readonly<Record<string, unknown>>,
): Promise<string> {
  const signingInput = `${encodedHeader(key, typ)}.${base64urlText(JSON.stringify(payload))}`;
  const signature = await key.sign(encoder.encode(signingInput));
  return `${signingInput}.${base64url(signature)}`;
}
