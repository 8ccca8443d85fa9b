/**
 * The 38 scopes of the course-school platform (spec §5.4), with the descriptions the spec gives:
 * the registry of our scope policy, and the scope lists of the generated documents.
 * @module
 */
import { defineScopes, type ScopeDefinition, type ScopeRegistry } from 'portcullis';

const area = (name: string, words: string): ScopeDefinition[] => [
  { name: `${name}:read`, description: `Read access to ${words}`, kind: 'api' },
  { name: `${name}:write`, description: `Write access to ${words}`, kind: 'api' },
];

/** The course school's scopes, in the spec's order. */
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
