/**
 * Responses of the authorization endpoint once the redirect URI is validated: the code redirect
 * and the error redirect, both carrying `state` and `iss` (RFC 6749 §4.1.2, RFC 9207 §2).
 * @module
 */
import { randomToken, sha256, timeOrderedId } from '../core/crypto.js';
import type { OAuthError } from '../core/errors.js';
import { type OAuthResponse, redirectResponse } from '../core/http.js';
import type { ServerContext } from '../server-context.js';
import type { AuthorizationCodeRecord, AuthorizationRequest } from '../storage/types.js';
import { appendQuery } from './redirect-uri.js';

/** Where a validated authorization request answers. */
export interface RedirectTarget {
  readonly redirectUri: string;
  readonly state: string | undefined;
}

/** Redirects an error to the validated redirect URI with `error`, `error_description`, `state`, `iss`. */
export function errorRedirect(ctx: ServerContext, target: RedirectTarget, error: OAuthError): OAuthResponse {
  return redirectResponse(
    appendQuery(target.redirectUri, {
      error: error.code,
      error_description: error.description,
      state: target.state,
      iss: ctx.config.issuer,
    }),
  );
}

/** A code about to be issued: the record to store, and the redirect that delivers it. */
export interface NewCode {
  readonly record: AuthorizationCodeRecord;
  readonly response: OAuthResponse;
}

/**
 * Mints an authorization code bound to everything it will be checked against, and the redirect to
 * the client with `code`, `state` and `iss`. Nothing is stored: the caller stores the record, on
 * its own ({@link issueCode}) or with the pending authorization it completes.
 * @see RFC 6749 §4.1.2, RFC 7636 §4.4, RFC 9207 §2
 */
export async function newCode(
  ctx: ServerContext,
  request: AuthorizationRequest,
  scope: readonly string[],
  user: { readonly id: string; readonly authTime: number },
): Promise<NewCode> {
  const { config } = ctx;
  const now = ctx.now();
  const code = randomToken(config.runtime.random, 32);
  const record: AuthorizationCodeRecord = {
    codeHash: await sha256(code),
    grantId: timeOrderedId(config.runtime.random, config.runtime.clock()),
    clientId: request.clientId,
    userId: user.id,
    redirectUri: request.redirectUri,
    redirectUriSent: request.redirectUriSent,
    codeChallenge: request.codeChallenge,
    codeChallengeMethod: request.codeChallengeMethod,
    scope,
    resources: request.resources,
    ...(request.nonce === undefined ? {} : { nonce: request.nonce }),
    authTime: user.authTime,
    createdAt: now,
    expiresAt: now + config.tokens.codeTtlSeconds,
  };
  const response = redirectResponse(
    appendQuery(request.redirectUri, { code, state: request.state, iss: config.issuer }),
  );
  return { record, response };
}

/** Reports a stored code (`code.issued`) and remembers its record for its exchange. */
export function codeIssued(ctx: ServerContext, code: AuthorizationCodeRecord): void {
  // Its exchange needs no read of storage (grants/recently-issued.ts).
  ctx.recentlyIssued.codes.remember(code.codeHash, code);
  ctx.emit({ type: 'code.issued', clientId: code.clientId, userId: code.userId, grantId: code.grantId });
}

/**
 * Issues an authorization code with no pending authorization to complete: stores it and redirects
 * to the client with `code`, `state` and `iss`.
 * @see RFC 6749 §4.1.2, RFC 7636 §4.4, RFC 9207 §2
 */
export async function issueCode(
  ctx: ServerContext,
  request: AuthorizationRequest,
  scope: readonly string[],
  user: { readonly id: string; readonly authTime: number },
): Promise<OAuthResponse> {
  const code = await newCode(ctx, request, scope, user);
  await ctx.config.storage.codes.create(code.record);
  codeIssued(ctx, code.record);
  return code.response;
}
