/**
 * The endpoint paths of the course-school platform spec, which most tests exercise: the library's
 * defaults are neutral (`/oauth/*`), so tests that speak the spec's paths configure them.
 */
import type { EndpointPaths } from '../../src/options.js';

export const SPEC_PATHS: EndpointPaths = {
  authorization: '/oauth/authorize',
  authorizationDecision: '/oauth/authorize/decision',
  token: '/api/oauth/token',
  registration: '/api/oauth/register',
  userinfo: '/api/oauth/userinfo',
  revocation: '/api/oauth/revoke',
  introspection: '/api/oauth/introspect',
  jwks: '/.well-known/jwks.json',
};
