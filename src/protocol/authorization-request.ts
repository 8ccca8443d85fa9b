/**
 * Validation of an authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, OIDC Core §3.1.2.1),
 * in the two phases the RFC requires: first the client and its redirect URI, whose failures must
 * never redirect; then everything else, whose failures redirect to the validated URI.
 * @module
 */
import { OAuthError } from '../core/errors.js';
import type { Params } from '../core/params.js';
import type { ServerContext } from '../server-context.js';
import type { AuthorizationRequest, ClientRecord } from '../storage/types.js';
import { checkCodeChallenge } from './pkce.js';
import { matchRedirectUri } from './redirect-uri.js';
import { resolveResources } from './resource.js';
import { parseScope } from './scope.js';

/** Phase one's result: a known client and a redirect URI errors may be sent to. */
export interface ValidatedTarget {
  readonly client: ClientRecord;
  readonly redirectUri: string;
  readonly redirectUriSent: boolean;
  /** `state`, when it was sent once and is of a sane size (so it can be echoed on errors). */
  readonly state: string | undefined;
}

const MAX_STATE = 4096;
const PROMPTS = new Set(['none', 'login', 'consent', 'select_account']);
const LOCALE = /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/;

function single(params: Params, name: string): string | undefined {
  return params.get(name);
}

/**
 * Phase one. Throws {@link OAuthError}s that the caller shows as a page, never as a redirect.
 * `clientAddress` (the request's rate-limit key) goes with the client lookup (metadata documents).
 */
export async function validateTarget(
  ctx: ServerContext,
  params: Params,
  clientAddress?: string,
): Promise<ValidatedTarget> {
  const clientId = single(params, 'client_id');
  if (clientId === undefined) throw new OAuthError('invalid_request', 'client_id is missing');
  const client = await ctx.getClient(clientId, clientAddress);
  if (client === null) throw new OAuthError('invalid_client', 'the client is unknown');
  const requested = single(params, 'redirect_uri');
  let redirectUri: string;
  if (requested === undefined) {
    const registered = client.metadata.redirect_uris;
    if (registered.length !== 1) {
      throw new OAuthError('invalid_request', 'redirect_uri is required when the client registered several');
    }
    // OIDC Core §3.1.2.1 makes redirect_uri REQUIRED for OpenID requests.
    if (params.getAll('scope').some((s) => s.split(' ').includes('openid'))) {
      throw new OAuthError('invalid_request', 'redirect_uri is required for OpenID Connect requests');
    }
    redirectUri = registered[0]!;
  } else {
    if (matchRedirectUri(requested, client.metadata.redirect_uris) === undefined) {
      throw new OAuthError('invalid_request', 'redirect_uri does not match any URI registered by the client');
    }
    redirectUri = requested;
  }
  const states = params.getAll('state');
  const state = states.length === 1 && states[0]!.length <= MAX_STATE ? states[0] : undefined;
  return { client, redirectUri, redirectUriSent: requested !== undefined, state };
}

function parsePrompt(value: string | undefined): AuthorizationRequest['prompt'] {
  if (value === undefined) return [];
  const prompts = [...new Set(value.split(' ').filter((p) => p !== ''))];
  for (const p of prompts) {
    if (!PROMPTS.has(p)) throw new OAuthError('invalid_request', `prompt '${p}' is not supported`);
  }
  if (prompts.includes('none') && prompts.length > 1) {
    throw new OAuthError('invalid_request', "prompt 'none' cannot be combined with other values");
  }
  return prompts as AuthorizationRequest['prompt'];
}

function bounded(params: Params, name: string, max: number): string | undefined {
  const value = params.get(name);
  if (value !== undefined && value.length > max) {
    throw new OAuthError('invalid_request', `${name} is longer than ${max} characters`);
  }
  return value;
}

/** Phase two. Throws {@link OAuthError}s that the caller redirects to the validated URI. */
export function validateRequest(
  ctx: ServerContext,
  params: Params,
  target: ValidatedTarget,
): AuthorizationRequest {
  const repeated = params.repeated().filter((name) => name !== 'resource');
  if (repeated.length > 0) {
    throw new OAuthError('invalid_request', `the '${repeated[0]}' parameter was given more than once`);
  }
  const rawState = params.get('state');
  if (rawState !== undefined && rawState.length > MAX_STATE) {
    throw new OAuthError('invalid_request', `state is longer than ${MAX_STATE} characters`);
  }
  if (params.has('request'))
    throw new OAuthError('request_not_supported', 'request objects are not supported');
  if (params.has('request_uri'))
    throw new OAuthError('request_uri_not_supported', 'request_uri is not supported');

  const responseType = params.get('response_type');
  if (responseType === undefined) throw new OAuthError('invalid_request', 'response_type is missing');
  if (responseType !== 'code') {
    throw new OAuthError('unsupported_response_type', "only the 'code' response type is supported");
  }
  const responseMode = params.get('response_mode');
  if (responseMode !== undefined && responseMode !== 'query') {
    throw new OAuthError('invalid_request', "only response_mode 'query' is supported");
  }
  if (!target.client.metadata.grant_types.includes('authorization_code')) {
    throw new OAuthError(
      'unauthorized_client',
      'the client is not registered for the authorization_code grant',
    );
  }

  const codeChallenge = checkCodeChallenge(params.get('code_challenge'), params.get('code_challenge_method'));

  const policy = ctx.config.scopePolicy;
  let scope = parseScope(params.get('scope'));
  if (scope.length === 0) scope = [...policy.defaultScopes(target.client)];
  if (scope.length === 0) throw new OAuthError('invalid_scope', 'scope is required');
  scope = [...policy.filterRequested(target.client, scope)];

  const resources = resolveResources(ctx.config, params.getAll('resource'));
  const prompt = parsePrompt(params.get('prompt'));

  const maxAgeText = params.get('max_age');
  let maxAge: number | undefined;
  if (maxAgeText !== undefined) {
    if (!/^[0-9]{1,10}$/.test(maxAgeText))
      throw new OAuthError('invalid_request', 'max_age must be a non-negative integer');
    maxAge = Number(maxAgeText);
  }
  const uiLocalesText = bounded(params, 'ui_locales', 256);
  const uiLocales = uiLocalesText?.split(' ').filter((l) => LOCALE.test(l));
  const nonce = bounded(params, 'nonce', 1024);
  const loginHint = bounded(params, 'login_hint', 512);

  return {
    clientId: target.client.clientId,
    redirectUri: target.redirectUri,
    redirectUriSent: target.redirectUriSent,
    ...(target.state === undefined ? {} : { state: target.state }),
    scope,
    resources,
    codeChallenge,
    codeChallengeMethod: 'S256',
    ...(nonce === undefined ? {} : { nonce }),
    prompt,
    ...(maxAge === undefined ? {} : { maxAge }),
    ...(loginHint === undefined ? {} : { loginHint }),
    ...(uiLocales === undefined || uiLocales.length === 0 ? {} : { uiLocales }),
  };
}
