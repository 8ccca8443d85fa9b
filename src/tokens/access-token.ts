/**
 * Access tokens: RFC 9068 JWTs (`typ: at+jwt`) or opaque strings. Either way a record keyed by the
 * token's key (its time, then its hash: token-key.ts) goes to storage, which is what makes
 * revocation exact.
 * @module
 */
import type { ServerContext } from '../server-context.js';
import type { AccessTokenRecord } from '../storage/types.js';
import { signJwt } from './jws.js';
import { mintedJwtKey, mintJti, mintOpaqueToken, tokenKey } from './token-key.js';

/** What an access token is issued for. */
export interface AccessTokenInput {
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly scope: readonly string[];
  readonly audience: readonly string[];
  readonly authTime?: number;
  /** The thumbprint of the DPoP key the token is bound to (`cnf.jkt`), absent for a bearer token. */
  readonly dpopJkt?: string | undefined;
}

/** A minted access token: the string for the client and the record for storage. */
export interface MintedAccessToken {
  readonly token: string;
  readonly record: AccessTokenRecord;
  readonly expiresIn: number;
}

/**
 * Mints an access token, bound to a DPoP key when `input.dpopJkt` is given (`cnf.jkt` in a JWT,
 * `dpopJkt` on the record either way).
 * @see RFC 9068 §2.2 (claims), §2.1 (`typ: at+jwt`); RFC 9449 §6
 */
export async function mintAccessToken(
  ctx: ServerContext,
  input: AccessTokenInput,
): Promise<MintedAccessToken> {
  const { config } = ctx;
  const now = ctx.now();
  const ttl = config.tokens.accessTokenTtlSeconds;
  const nowMs = config.tokens.timeInTokens ? config.runtime.clock() : undefined;
  const jti = mintJti(config.runtime.random, nowMs);
  let token: string;
  if (config.tokens.accessTokenFormat === 'opaque') {
    token = mintOpaqueToken(config.runtime.random, nowMs);
  } else {
    const key = await ctx.keys.signingKey(config.keys.accessTokenAlg);
    // RFC 9068 §2.2 claims; `aud` is a string when there is one resource. `jti` first: the
    // token's storage key is read from the payload's first bytes (token-key.ts).
    token = await signJwt(key, 'at+jwt', {
      jti,
      iss: config.issuer,
      sub: input.userId,
      aud: input.audience.length === 1 ? input.audience[0] : input.audience,
      exp: now + ttl,
      iat: now,
      client_id: input.clientId,
      scope: input.scope.join(' '),
      ...(input.authTime === undefined ? {} : { auth_time: input.authTime }),
      // RFC 9449 §6.1: the confirmation claim binds the token to the proof's key.
      ...(input.dpopJkt === undefined ? {} : { cnf: { jkt: input.dpopJkt } }),
    });
  }
  const record: AccessTokenRecord = {
    tokenHash:
      config.tokens.accessTokenFormat === 'opaque' ? await tokenKey(token) : await mintedJwtKey(token, jti),
    jti,
    grantId: input.grantId,
    clientId: input.clientId,
    userId: input.userId,
    scope: input.scope,
    audience: input.audience,
    issuedAt: now,
    expiresAt: now + ttl,
    ...(input.dpopJkt === undefined ? {} : { dpopJkt: input.dpopJkt }),
  };
  return { token, record, expiresIn: ttl };
}
