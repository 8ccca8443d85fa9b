/**
 * The 38 scopes of the course-school platform (spec §5.4), in the spec's order, with the words it
 * gives each: the scope policy, the metadata, the consent page, `/openapi.json` and `/auth.md` all
 * read them from here.
 * @module
 */
import { defineScopes, type ScopeDefinition, type ScopeRegistry } from 'portcullis';

const area = (name: string, words: string): ScopeDefinition[] => [
  { name: `${name}:read`, description: `Read access to ${words}`, kind: 'api' },
  { name: `${name}:write`, description: `Write access to ${words}`, kind: 'api' },
];

/** The course school's scopes: identity (OpenID Connect) and one or two per area of the API. */
export const courseSchoolScopes: ScopeRegistry = defineScopes([
  { name: 'openid', description: 'OpenID Connect authentication', kind: 'identity' },
  { name: 'profile', description: 'Basic profile information', kind: 'identity' },
  { name: 'email', description: 'Email address', kind: 'identity' },
  ...area('courses', 'courses'),
  ...area('students', 'students'),
  ...area('members', 'members'),
  { name: 'analytics:read', description: 'Read access to analytics', kind: 'api' },
  ...area('curriculum', 'curriculum'),
  { name: 'orders:read', description: 'Read access to orders', kind: 'api' },
  ...area('school', 'school'),
  ...area('appearance', 'appearance'),
  ...area('events', 'events'),
  ...area('membership_plans', 'membership plans'),
  ...area('coupons', 'coupons'),
  ...area('posts', 'posts'),
  ...area('subscriptions', 'subscriptions'),
  ...area('digital_products', 'digital products'),
  { name: 'comments:read', description: 'Read access to comments', kind: 'api' },
  ...area('lecturers', 'lecturers'),
  { name: 'storage:write', description: 'Write access to storage', kind: 'api' },
  { name: 'forms:read', description: 'Read access to forms', kind: 'api' },
  ...area('pages', 'pages'),
  ...area('account', 'account'),
]);

/** Every scope name, in order. */
export const SCOPE_NAMES: readonly string[] = courseSchoolScopes.scopes.map((s) => s.name);
