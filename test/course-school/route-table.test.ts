/**
 * The route table: one scope per operation, from the spec's 38; every scope area of spec §5.4 has
 * its family; what a student may grant follows from the table.
 */

import { describe, expect, it } from 'vitest';
import { FAMILIES } from '../../examples/course-school/src/api/route.js';
import { API_ROUTES, grantableScopes } from '../../examples/course-school/src/api/route-table.js';
import { courseSchoolScopes } from '../../examples/course-school/src/scopes.js';

const supported = courseSchoolScopes.scopes.map((s) => s.name);

describe('route table', () => {
  it('declares for every operation one scope of the spec', () => {
    for (const route of API_ROUTES) expect(supported, `${route.method} ${route.path}`).toContain(route.scope);
  });

  it('has a family for every scope area of spec §5.4, each with its own scopes', () => {
    expect(Object.keys(FAMILIES)).toHaveLength(20);
    for (const family of Object.keys(FAMILIES)) {
      const routes = API_ROUTES.filter((r) => r.family === family);
      expect(routes.length, family).toBeGreaterThan(0);
      for (const route of routes)
        expect(route.scope.split(':')[0], `${route.method} ${route.path}`).toBe(family);
    }
  });

  it('uses every API scope of the spec at least once', () => {
    const used = new Set(API_ROUTES.map((r) => r.scope));
    const api = supported.filter((s) => !['openid', 'profile', 'email'].includes(s));
    expect(api.filter((s) => !used.has(s))).toEqual([]);
  });

  it('reads with :read scopes and writes with :write scopes', () => {
    for (const route of API_ROUTES) {
      const expected = route.method === 'GET' && route.scope !== 'storage:write' ? ':read' : ':write';
      expect(route.scope.endsWith(expected), `${route.method} ${route.path} ${route.scope}`).toBe(true);
    }
  });

  it('has unique operation ids', () => {
    const ids = API_ROUTES.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('opens only catalog reads to anonymous callers', () => {
    const open = API_ROUTES.filter((r) => r.access === 'public').map((r) => `${r.method} ${r.path}`);
    expect(open.sort()).toEqual(
      [
        'GET /courses',
        'GET /courses/{courseId}',
        'GET /courses/{courseId}/outline',
        'GET /membership-plans',
        'GET /membership-plans/{planId}',
        'GET /pages',
        'GET /pages/{pageId}',
      ].sort(),
    );
  });
});

describe('grantable scopes', () => {
  it('lets the owner grant every scope', () => {
    expect([...grantableScopes('owner', supported)].sort()).toEqual([...supported].sort());
  });

  it('keeps school administration out of what a student may grant', () => {
    const student = grantableScopes('student', supported);
    for (const scope of [
      'openid',
      'email',
      'courses:read',
      'orders:read',
      'subscriptions:write',
      'account:write',
    ]) {
      expect(student.has(scope), scope).toBe(true);
    }
    for (const scope of [
      'courses:write',
      'students:read',
      'members:write',
      'analytics:read',
      'school:write',
      'coupons:read',
      'storage:write',
      'forms:read',
    ]) {
      expect(student.has(scope), scope).toBe(false);
    }
  });
});
