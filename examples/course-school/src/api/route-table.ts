/**
 * The route table of the business API: every operation, each declaring its one scope. The
 * dispatcher, the guard, the OpenAPI document and the scope policy's `grantable` all read it.
 * @module
 */
import { accountRoutes } from './families/account.js';
import { analyticsRoutes } from './families/analytics.js';
import { appearance } from './families/appearance.js';
import { comments } from './families/comments.js';
import { coupons } from './families/coupons.js';
import { courseOutlineRoute, courses } from './families/courses.js';
import { lessons, sections } from './families/curriculum.js';
import { digitalProducts } from './families/digital-products.js';
import { events } from './families/events.js';
import { forms } from './families/forms.js';
import { lecturers } from './families/lecturers.js';
import { members } from './families/members.js';
import { membershipPlans } from './families/membership-plans.js';
import { orders } from './families/orders.js';
import { pages } from './families/pages.js';
import { posts } from './families/posts.js';
import { school } from './families/school.js';
import { storageRoutes } from './families/storage.js';
import { students } from './families/students.js';
import { subscriptions } from './families/subscriptions.js';
import type { ApiRoute } from './route.js';

/** Every business operation, in the order the OpenAPI document lists them. */
export const API_ROUTES: readonly ApiRoute[] = Object.freeze([
  ...courses.routes,
  courseOutlineRoute,
  ...sections.routes,
  ...lessons.routes,
  ...students.routes,
  ...members.routes,
  ...analyticsRoutes,
  ...orders.routes,
  ...school.routes,
  ...appearance.routes,
  ...events.routes,
  ...membershipPlans.routes,
  ...coupons.routes,
  ...posts.routes,
  ...subscriptions.routes,
  ...digitalProducts.routes,
  ...comments.routes,
  ...lecturers.routes,
  ...storageRoutes,
  ...forms.routes,
  ...pages.routes,
  ...accountRoutes,
]);

/** Identity scopes: they release claims, not API access, and every user may grant them. */
const IDENTITY_SCOPES = ['openid', 'profile', 'email'];

/**
 * The scopes a user of a role may grant, derived from the table: a scope is grantable when at
 * least one operation under it is open to that role. The owner may grant every scope; a student
 * gets identity, account, catalog and content reads, and their own orders and subscriptions, but
 * nothing that administers the school (`students:*`, `coupons:*`, `school:write`, ...).
 */
export function grantableScopes(role: 'owner' | 'student', supported: readonly string[]): Set<string> {
  if (role === 'owner') return new Set(supported);
  const granted = new Set(IDENTITY_SCOPES);
  for (const route of API_ROUTES) if (route.access !== 'owner') granted.add(route.scope);
  return granted;
}
