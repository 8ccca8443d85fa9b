/**
 * The authorization endpoint (RFC 6749 §4.1.1, OIDC Core §3.1.2): validate the client and redirect
 * URI (failures show a page), validate the rest (failures redirect), make sure a user is signed in
 * (or hand off to the host's login and resume), then ask for consent or issue the code.
 * @module
 */
import { randomToken, sha256 } from '../core/crypto.js';
import { OAuthError, toOAuthError } from '../core/errors.js';
import { methodNotAllowed, type OAuthRequest, type OAuthResponse, redirectResponse } from '../core/http.js';
import { type Params, parseFormBody, parseQuery } from '../core/params.js';
import { enforceRateLimit } from '../core/rate-limit.js';
import { logRequestFailure, withRequestId } from '../core/request-id.js';
import type { AuthenticatedUser, ConsentPageContext } from '../options.js';
import { consentResponse, renderConsentPage } from '../pages/consent.js';
import { errorPageFor, pageHeaders } from '../pages/html.js';
import { validateRequest, validateTarget } from '../protocol/authorization-request.js';
import {
  codeIssued,
  errorRedirect,
  issueCode,
  newCode,
  type RedirectTarget,
} from '../protocol/authorization-response.js';
import { isLoopbackRedirect, redirectHostPort, redirectOrigin } from '../protocol/redirect-uri.js';
import { currentUser } from '../protocol/session.js';
import type { ServerContext } from '../server-context.js';
import { bindingOf } from '../storage/binding.js';
import type {
  AuthorizationRequest,
  ClientRecord,
  InteractionBinding,
  PendingAuthorizationRecord,
} from '../storage/types.js';

/** The request being served: validated, with the pending record it came from when resumed. */
interface Validated {
  readonly client: ClientRecord;
  readonly request: AuthorizationRequest;
  readonly pending: { readonly id: string; readonly record: PendingAuthorizationRecord } | undefined;
}

/**
 * Whether the user's authentication is recent enough: `prompt=login` (and `select_account`,
 * `max_age=0`) need a login after the request started; `max_age` bounds its age (OIDC Core §3.1.2.1).
 */
function authenticationFresh(
  ctx: ServerContext,
  request: AuthorizationRequest,
  user: AuthenticatedUser,
  startedAt: number | undefined,
): boolean {
  const loggedInSinceStart = startedAt !== undefined && user.authTime >= startedAt;
  if (request.prompt.includes('login') || request.prompt.includes('select_account') || request.maxAge === 0) {
    return loggedInSinceStart;
  }
  if (request.maxAge !== undefined) return loggedInSinceStart || ctx.now() - user.authTime <= request.maxAge;
  return true;
}

async function createPending(
  ctx: ServerContext,
  request: AuthorizationRequest,
  binding?: InteractionBinding,
): Promise<{ id: string; record: PendingAuthorizationRecord }> {
  const now = ctx.now();
  const id = randomToken(ctx.config.runtime.random, 32);
  const record: PendingAuthorizationRecord = {
    idHash: await sha256(id),
    request,
    createdAt: now,
    expiresAt: now + ctx.config.tokens.pendingAuthorizationTtlSeconds,
    ...binding,
  };
  await ctx.config.storage.interactions.create(record);
  // Bound to a user and a consent form: the form's answer needs no read (grants/recently-issued.ts).
  if (binding !== undefined) ctx.recentlyIssued.pendingAuthorizations.remember(record.idHash, record);
  return { id, record };
}

/**
 * Parses a new request (both phases) or loads a resumed one (`?request_id=` after login).
 * `clientAddress` goes with the client lookup (a metadata document's fetch budget is per address).
 */
async function validate(
  ctx: ServerContext,
  params: Params,
  setTarget: (target: RedirectTarget) => void,
  clientAddress: string | undefined,
): Promise<Validated> {
  const requestId = params.get('request_id');
  if (requestId !== undefined) {
    const record = await ctx.config.storage.interactions.get(await sha256(requestId), ctx.now());
    if (record === null) {
      throw new OAuthError(
        'invalid_request',
        'this authorization request has expired or was already completed',
      );
    }
    const client = await ctx.getClient(record.request.clientId, clientAddress);
    if (client === null) throw new OAuthError('invalid_client', 'the client is no longer registered');
    setTarget({ redirectUri: record.request.redirectUri, state: record.request.state });
    return { client, request: record.request, pending: { id: requestId, record } };
  }
  const target = await validateTarget(ctx, params, clientAddress);
  setTarget({ redirectUri: target.redirectUri, state: target.state });
  return { client: target.client, request: validateRequest(ctx, params, target), pending: undefined };
}

async function renderConsent(
  ctx: ServerContext,
  validated: Validated,
  user: AuthenticatedUser,
  scope: readonly string[],
): Promise<OAuthResponse> {
  const { config } = ctx;
  const csrf = randomToken(config.runtime.random, 32);
  const csrfHash = await sha256(csrf);
  const binding = bindingOf(user, csrfHash);
  let requestId: string;
  if (validated.pending === undefined) {
    requestId = (await createPending(ctx, validated.request, binding)).id;
  } else {
    const { record } = validated.pending;
    const bound = await config.storage.interactions.bind(record.idHash, binding, ctx.now());
    if (!bound) throw new OAuthError('access_denied', 'this authorization request belongs to another user');
    // As stored now: a binding without a session keeps the one bound before.
    ctx.recentlyIssued.pendingAuthorizations.remember(record.idHash, { ...record, ...binding });
    requestId = validated.pending.id;
  }
  const { request, client } = validated;
  const describe = (name: string) => ({
    name,
    description: config.scopePolicy.describe(name)?.description ?? name,
  });
  const context: ConsentPageContext = {
    client,
    clientName: client.metadata.client_name ?? client.clientId,
    redirectUri: request.redirectUri,
    redirectHost: redirectHostPort(request.redirectUri),
    loopback: isLoopbackRedirect(request.redirectUri),
    scopes: scope.map(describe),
    notGrantable: request.scope.filter((name) => !scope.includes(name)).map(describe),
    resources: request.resources,
    action: config.urls.authorizationDecision,
    fields: { request_id: requestId, csrf_token: csrf },
    userId: user.id,
    ...(user.name === undefined ? {} : { userName: user.name }),
    ...(request.uiLocales === undefined ? {} : { uiLocales: request.uiLocales }),
  };
  const origin = redirectOrigin(request.redirectUri);
  if (config.consent.render !== undefined) {
    const rendered = await config.consent.render(context);
    return typeof rendered === 'string'
      ? { status: 200, headers: pageHeaders([origin]), body: rendered }
      : rendered;
  }
  return consentResponse(renderConsentPage(context, config.metadata.serviceName), origin);
}

/**
 * `GET` / `POST {authorization_endpoint}`.
 *
 * @throws nothing: phase-one failures answer a 400 page, later ones redirect with `error`, `state`, `iss`
 * @see RFC 6749 §4.1.1, §4.1.2.1; RFC 7636 §4.4.1; RFC 9207 §2; OIDC Core §3.1.2
 */
export async function handleAuthorize(ctx: ServerContext, httpRequest: OAuthRequest): Promise<OAuthResponse> {
  let target: RedirectTarget | undefined;
  try {
    if (httpRequest.method !== 'GET' && httpRequest.method !== 'POST')
      throw methodNotAllowed(['GET', 'POST']);
    const clientAddress = ctx.config.clientIp(httpRequest);
    await enforceRateLimit(ctx.config.rateLimiter, 'authorize', clientAddress);
    const params = httpRequest.method === 'GET' ? parseQuery(httpRequest) : parseFormBody(httpRequest);
    const validated = await validate(
      ctx,
      params,
      (t) => {
        target = t;
      },
      clientAddress,
    );
    const { request, client } = validated;

    const user = await currentUser(ctx, httpRequest);
    if (user === null || !authenticationFresh(ctx, request, user, validated.pending?.record.createdAt)) {
      if (request.prompt.includes('none')) throw new OAuthError('login_required', 'the user must sign in');
      const loginRedirect = ctx.config.loginRedirect;
      if (loginRedirect === undefined)
        throw new OAuthError('server_error', 'the loginUrl option is not configured');
      const pending = validated.pending ?? (await createPending(ctx, request));
      const returnTo = `${ctx.config.urls.authorization}?request_id=${encodeURIComponent(pending.id)}`;
      return redirectResponse(
        loginRedirect({
          returnTo,
          clientId: client.clientId,
          reauthenticate: user !== null,
          ...(request.loginHint === undefined ? {} : { loginHint: request.loginHint }),
          ...(request.uiLocales === undefined ? {} : { uiLocales: request.uiLocales }),
        }),
      );
    }

    const policy = ctx.config.scopePolicy;
    const scope = await policy.grantable(user.id, client, request.scope);
    if (scope.length === 0)
      throw new OAuthError('access_denied', 'the user cannot grant any of the requested scopes');
    // `prompt=consent` asks whatever was remembered: then the remembered consent is not read.
    const promptConsent = request.prompt.includes('consent');
    const remembered =
      ctx.config.consent.remember && !promptConsent
        ? await ctx.config.storage.consents.get(user.id, client.clientId)
        : null;
    const consentRequired =
      promptConsent ||
      policy.consentRequired({ client, userId: user.id, scope, resources: request.resources, remembered });
    if (!consentRequired) {
      if (validated.pending === undefined) return await issueCode(ctx, request, scope, user);
      // Resumed after login: the pending authorization is consumed and the code stored in one step.
      const code = await newCode(ctx, request, scope, user);
      const completed = await ctx.config.storage.interactions.complete({
        idHash: validated.pending.record.idHash,
        code: code.record,
        now: ctx.now(),
      });
      if (!completed)
        throw new OAuthError('invalid_request', 'this authorization request was already completed');
      codeIssued(ctx, code.record);
      return code.response;
    }
    if (request.prompt.includes('none')) throw new OAuthError('consent_required', 'the user must consent');
    return await renderConsent(ctx, validated, user, scope);
  } catch (error) {
    const e = toOAuthError(error);
    const response =
      target === undefined || e.code === 'method_not_allowed' || e.code === 'too_many_requests'
        ? errorPageFor(ctx.config.metadata.serviceName, e)
        : errorRedirect(ctx, target, e);
    if (e.status < 500) return response;
    const { runtime } = ctx.config;
    return withRequestId(
      response,
      logRequestFailure(runtime, httpRequest, 'authorization request failed', error),
    );
  }
}
