/**
 * ID tokens (OpenID Connect Core §2, §3.1.3.6): RS256 by default, ES256 for clients that register
 * `id_token_signed_response_alg: ES256`.
 * @module
 */
import { leftHalfOfDigest, sha256 } from '../core/crypto.js';
import type { ServerContext } from '../server-context.js';
import type { ClientRecord } from '../storage/types.js';
import { signJwt } from './jws.js';
import { digestOfKey } from './token-key.js';

/** What an ID token says. */
export interface IdTokenInput {
  readonly client: ClientRecord;
  readonly userId: string;
  readonly authTime: number;
  readonly nonce?: string | undefined;
  /**
   * The storage key of the access token issued with it (`AccessTokenRecord.tokenHash`), whose
   * SHA-256 digest gives `at_hash`: the token is not hashed a second time.
   */
  readonly accessTokenHash: string;
}

/** `at_hash`: the left half of the SHA-256 of the access token, base64url (OIDC Core §3.1.3.6). */
export async function atHash(accessToken: string): Promise<string> {
  return leftHalfOfDigest(await sha256(accessToken));
}

/** Mints an ID token. */
export async function mintIdToken(ctx: ServerContext, input: IdTokenInput): Promise<string> {
  const { config } = ctx;
  const alg = input.client.metadata.id_token_signed_response_alg ?? config.keys.idTokenAlg;
  const key = await ctx.keys.signingKey(alg);
  const now = ctx.now();
  return signJwt(key, 'JWT', {
    iss: config.issuer,
    sub: input.userId,
    aud: input.client.clientId,
    exp: now + config.tokens.idTokenTtlSeconds,
    iat: now,
    auth_time: input.authTime,
    ...(input.nonce === undefined ? {} : { nonce: input.nonce }),
    at_hash: leftHalfOfDigest(digestOfKey(input.accessTokenHash)),
  });
}
