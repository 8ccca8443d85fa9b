/**
 * Analytics: figures computed from the school's records. Read-only, the owner only.
 * @module
 */
import { z } from 'zod';
import { allRecords } from '../catalog.js';
import { json } from '../errors.js';
import { defineRoute } from '../route.js';
import { currency, recordId } from '../schemas.js';

const summary = defineRoute({
  method: 'GET',
  path: '/analytics/summary',
  family: 'analytics',
  operationId: 'getAnalyticsSummary',
  summary: 'Read the headline figures of the school',
  scope: 'analytics:read',
  access: 'owner',
  response: {
    status: 200,
    description: 'Counts and revenue',
    schema: z.object({
      students: z.number().int(),
      courses: z.number().int(),
      published_courses: z.number().int(),
      paid_orders: z.number().int(),
      revenue_cents: z.number().int().describe('Sum of paid orders'),
      currency,
      active_subscriptions: z.number().int(),
    }),
  },
  async handler({ services }) {
    const data = services.data;
    const [courses, orders, subscriptions, school] = await Promise.all([
      allRecords(data, 'course'),
      allRecords(data, 'order'),
      allRecords(data, 'subscription'),
      data.getRecord('school', 'school'),
    ]);
    const paid = orders.filter((o) => o.data.status === 'paid');
    return json(200, {
      students: await data.countRecords('student'),
      courses: courses.length,
      published_courses: courses.filter((c) => c.isPublic).length,
      paid_orders: paid.length,
      revenue_cents: paid.reduce((sum, o) => sum + Number(o.data.total_cents), 0),
      currency: school?.data.currency ?? 'USD',
      active_subscriptions: subscriptions.filter((s) => s.data.status === 'active').length,
    });
  },
});

const perCourse = defineRoute({
  method: 'GET',
  path: '/analytics/courses',
  family: 'analytics',
  operationId: 'getCourseAnalytics',
  summary: 'Read enrolment figures per course',
  scope: 'analytics:read',
  access: 'owner',
  response: {
    status: 200,
    description: 'One entry per course',
    schema: z.object({
      data: z.array(
        z.object({
          course_id: recordId,
          title: z.string(),
          enrolled_students: z.number().int(),
          lessons: z.number().int(),
        }),
      ),
    }),
  },
  async handler({ services }) {
    const data = services.data;
    const [courses, students] = await Promise.all([allRecords(data, 'course'), allRecords(data, 'student')]);
    const rows = await Promise.all(
      courses.map(async (c) => ({
        course_id: c.id,
        title: String(c.data.title),
        enrolled_students: students.filter((s) => (s.data.enrolled_course_ids as string[]).includes(c.id))
          .length,
        lessons: await data.countRecords('lesson', { parentId: c.id }),
      })),
    );
    return json(200, { data: rows });
  },
});

/** The analytics routes. */
export const analyticsRoutes = [summary, perCourse];
