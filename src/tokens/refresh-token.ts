/**
 * Refresh tokens: opaque, the time they were made and 256 random bits, stored under their key (the
 * time, then the hash: token-key.ts). For the grace window, the successor is sealed with a key
 * derived from its predecessor's value, so only someone holding the old token can recover the new
 * one and nothing readable is stored.
 * @module
 */
import { aesGcmDecrypt, aesGcmEncrypt, base64url, sha256Bytes } from '../core/crypto.js';
import type { ServerContext } from '../server-context.js';
import type { RefreshTokenRecord } from '../storage/types.js';
import { mintOpaqueToken, tokenKey } from './token-key.js';

/** A new refresh token and its record. */
export interface MintedRefreshToken {
  readonly token: string;
  readonly record: RefreshTokenRecord;
}

/** Mints a refresh token for a grant. */
export async function mintRefreshToken(
  ctx: ServerContext,
  grant: {
    readonly grantId: string;
    readonly clientId: string;
    readonly userId: string;
    readonly scope: readonly string[];
    readonly resources: readonly string[];
    /** When the user authenticated (OIDC `auth_time`): an ID token minted on refresh needs it. */
    readonly authTime: number;
    /** The grant's absolute expiry, when known; storage enforces it either way. */
    readonly expiresAt?: number;
  },
  /** The DPoP key a public client's refresh token is bound to (RFC 9449 §5). */
  dpopJkt?: string,
): Promise<MintedRefreshToken> {
  const now = ctx.now();
  const { runtime, tokens } = ctx.config;
  const token = mintOpaqueToken(runtime.random, tokens.timeInTokens ? runtime.clock() : undefined);
  return {
    token,
    record: {
      tokenHash: await tokenKey(token),
      grantId: grant.grantId,
      clientId: grant.clientId,
      userId: grant.userId,
      scope: grant.scope,
      resources: grant.resources,
      authTime: grant.authTime,
      issuedAt: now,
      expiresAt: Math.min(
        now + ctx.config.tokens.refreshTokenIdleTtlSeconds,
        grant.expiresAt ?? Number.POSITIVE_INFINITY,
      ),
      ...(dpopJkt === undefined ? {} : { dpopJkt }),
    },
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The AES-256 key a successor is sealed under: SHA-256 of a label and the predecessor. */
function sealingKey(predecessor: string): Promise<Uint8Array<ArrayBuffer>> {
  return sha256Bytes(`portcullis refresh grace\u0000${predecessor}`);
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** Seals `successor` under a key derived from `predecessor` (AES-GCM). */
export async function sealSuccessor(
  ctx: ServerContext,
  predecessor: string,
  successor: string,
): Promise<string> {
  const iv = ctx.config.runtime.random(12);
  const sealed = await aesGcmEncrypt(await sealingKey(predecessor), iv, encoder.encode(successor));
  const out = new Uint8Array(iv.length + sealed.length);
  out.set(iv, 0);
  out.set(sealed, iv.length);
  return base64url(out);
}

/** Opens a sealed successor; `undefined` when it does not open with this predecessor. */
export async function openSuccessor(predecessor: string, sealed: string): Promise<string | undefined> {
  try {
    const bytes = fromBase64url(sealed);
    const plain = await aesGcmDecrypt(await sealingKey(predecessor), bytes.slice(0, 12), bytes.slice(12));
    return decoder.decode(plain);
  } catch {
    return undefined;
  }
}
