/**
 * The consent decision (`POST {authorizationDecision}`): the only thing the browser contributes is
 * `allow` or `deny`. The pending request, its scopes and redirect come from storage (or from the
 * record this server stored when it showed the page, `grants/recently-issued.ts`); the form's CSRF
 * token must match the one bound to this user's session and this request, which the completion
 * checks again in its atomic step.
 * @module
 */
import { sha256 } from '../core/crypto.js';
import { OAuthError, toOAuthError } from '../core/errors.js';
import { methodNotAllowed, type OAuthRequest, type OAuthResponse } from '../core/http.js';
import { parseFormBody } from '../core/params.js';
import { enforceRateLimit } from '../core/rate-limit.js';
import { logRequestFailure, withRequestId } from '../core/request-id.js';
import { errorPageFor } from '../pages/html.js';
import { codeIssued, errorRedirect, newCode } from '../protocol/authorization-response.js';
import { currentUser } from '../protocol/session.js';
import type { ServerContext } from '../server-context.js';
import { bindingOf, isBoundTo } from '../storage/binding.js';

/**
 * Refuses cross-site form posts (AZ-22): a foreign `Origin`, or `Sec-Fetch-Site: cross-site`. The
 * consent page sends `Referrer-Policy: no-referrer`, under which browsers post `Origin: null`
 * (Fetch, "serializing a request origin"): that value proves nothing either way, so the CSRF token
 * bound to the session and to this request decides.
 */
function checkSameOrigin(ctx: ServerContext, request: OAuthRequest): void {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== 'null' && origin !== ctx.config.origin) {
    throw new OAuthError('access_denied', 'the consent form was posted from another site', { status: 403 });
  }
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') {
    throw new OAuthError('access_denied', 'the consent form was posted from another site', { status: 403 });
  }
}

const notThisSession = () =>
  new OAuthError('access_denied', 'the consent form does not belong to this session', { status: 403 });

const alreadyCompleted = () =>
  new OAuthError('invalid_request', 'this authorization request was already completed');

/**
 * Handles the consent decision and redirects (303) with a code, or with `access_denied`.
 *
 * @throws nothing: forged, stale or foreign submissions answer a 400/403 page and issue no code
 * @see RFC 6749 §4.1.2, §10.12 (CSRF); RFC 9700 §4.12 (303 after POST)
 */
export async function handleAuthorizeDecision(
  ctx: ServerContext,
  request: OAuthRequest,
): Promise<OAuthResponse> {
  const { config } = ctx;
  const page = (error: unknown) => {
    const response = errorPageFor(config.metadata.serviceName, error);
    if (response.status < 500) return response;
    return withRequestId(
      response,
      logRequestFailure(config.runtime, request, 'consent decision failed', error),
    );
  };
  try {
    if (request.method !== 'POST') throw methodNotAllowed(['POST']);
    await enforceRateLimit(config.rateLimiter, 'authorize', config.clientIp(request));
    checkSameOrigin(ctx, request);
    const params = parseFormBody(request);
    const requestId = params.get('request_id');
    const csrf = params.get('csrf_token');
    const decision = params.get('decision');
    if (requestId === undefined || csrf === undefined)
      throw new OAuthError('invalid_request', 'the consent form is incomplete');
    if (decision !== 'allow' && decision !== 'deny')
      throw new OAuthError('invalid_request', 'decision must be allow or deny');

    const user = await currentUser(ctx, request);
    if (user === null)
      throw new OAuthError('access_denied', 'you are no longer signed in; start again', { status: 403 });
    const idHash = await sha256(requestId);
    const boundTo = bindingOf(user, await sha256(csrf));
    // The record this server stored when it showed the consent page, when the form matches it:
    // its request never changes, and the completion below checks the binding again, atomically
    // (grants/recently-issued.ts). Otherwise, and for a denial, storage decides.
    const remembered = ctx.recentlyIssued.pendingAuthorizations.take(idHash, ctx.now());
    const pending =
      decision === 'allow' && remembered !== undefined && isBoundTo(remembered, boundTo)
        ? remembered
        : await config.storage.interactions.get(idHash, ctx.now());
    if (pending === null)
      throw new OAuthError(
        'invalid_request',
        'this authorization request has expired or was already completed',
      );
    if (!isBoundTo(pending, boundTo)) throw notThisSession();
    // Single use: of two concurrent submissions only one proceeds. A denial consumes the request
    // here; an approval completes it together with storing its code, in one atomic step (below).
    if (decision === 'deny' && (await config.storage.interactions.consume(idHash, ctx.now())) === null) {
      throw alreadyCompleted();
    }

    const authRequest = pending.request;
    const target = { redirectUri: authRequest.redirectUri, state: authRequest.state };
    let issued: OAuthResponse | undefined;
    try {
      if (decision === 'deny') {
        ctx.emit({ type: 'consent.denied', clientId: authRequest.clientId, userId: user.id });
        throw new OAuthError('access_denied', 'the user denied the request');
      }
      const client = await ctx.getClient(authRequest.clientId, config.clientIp(request));
      if (client === null) throw new OAuthError('invalid_client', 'the client is no longer registered');
      // The scopes are recomputed server-side; nothing from the form widens them (ATK-22).
      const scope = await config.scopePolicy.grantable(user.id, client, authRequest.scope);
      if (scope.length === 0)
        throw new OAuthError('access_denied', 'the user cannot grant any of the requested scopes');
      const now = ctx.now();
      const code = await newCode(ctx, authRequest, scope, { id: user.id, authTime: user.authTime });
      // Storage adds these to what the user allowed this client before.
      const consent = config.consent.remember
        ? {
            userId: user.id,
            clientId: client.clientId,
            scope,
            resources: authRequest.resources,
            createdAt: now,
            updatedAt: now,
          }
        : undefined;
      const completed = await config.storage.interactions.complete({
        idHash,
        code: code.record,
        ...(consent === undefined ? {} : { consent }),
        boundTo,
        now,
      });
      if (completed) {
        ctx.emit({ type: 'consent.granted', clientId: client.clientId, userId: user.id, scope });
        codeIssued(ctx, code.record);
        issued = code.response;
      }
    } catch (error) {
      const e = toOAuthError(error);
      // The storage was unavailable: the pending authorization is still there (or its completion
      // is in doubt), so the user gets a 503 page to retry from, not a redirect that ends the flow.
      if (e.code === 'temporarily_unavailable') throw error;
      const redirect = errorRedirect(ctx, target, e);
      if (e.status < 500) return redirect;
      return withRequestId(
        redirect,
        logRequestFailure(config.runtime, request, 'consent decision failed', error),
      );
    }
    if (issued !== undefined) return issued;
    // Not completed. Still there: bound to another form or session meanwhile (the consent page
    // shown again, on another instance). Otherwise completed by a concurrent submission, or
    // expired: no second code.
    if ((await config.storage.interactions.get(idHash, ctx.now())) !== null) throw notThisSession();
    throw alreadyCompleted();
  } catch (error) {
    return page(error);
  }
}
