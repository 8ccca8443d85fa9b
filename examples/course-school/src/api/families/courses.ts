/**
 * Courses: the public catalog (published courses, to anyone) and its administration (owner).
 * @module
 */
import { z } from 'zod';
import { courseOutline } from '../catalog.js';
import { ApiError, json } from '../errors.js';
import { canSee, recordFamily } from '../record-family.js';
import { defineRoute } from '../route.js';
import { currency, longText, priceCents, recordId, text, title } from '../schemas.js';

const fields = z.strictObject({
  title: title(),
  slug: text()
    .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'must be lower-case words joined by -')
    .max(100),
  summary: text().trim().max(500).default(''),
  description: longText().default(''),
  level: z.enum(['beginner', 'intermediate', 'advanced']).default('beginner'),
  price_cents: priceCents,
  currency,
  status: z
    .enum(['draft', 'published'])
    .default('draft')
    .describe('Only published courses are in the catalog'),
  lecturer_ids: z.array(recordId).max(10).default([]),
});

/** The courses family. */
export const courses = recordFamily({
  family: 'courses',
  kind: 'course',
  collectionPath: '/courses',
  idParam: 'courseId',
  idPrefix: 'crs',
  singular: 'course',
  plural: 'courses',
  schema: fields,
  readScope: 'courses:read',
  readAccess: 'public',
  write: { scope: 'courses:write', access: 'owner' },
  isPublic: (c) => c.status === 'published',
  searchText: (c) => `${c.title} ${c.summary}`,
  async validate(course, { services }) {
    for (const id of course.lecturer_ids) {
      if ((await services.data.getRecord('lecturer', id)) === null) {
        throw new ApiError('invalid_request', `no lecturer ${id}`, {
          issues: [{ path: 'body.lecturer_ids', message: `no lecturer ${id}` }],
        });
      }
    }
  },
});

const outline = z.object({
  course_id: recordId,
  title: z.string(),
  lesson_count: z.number().int(),
  duration_minutes: z.number().int(),
  sections: z.array(
    z.object({
      id: recordId.nullable(),
      title: z.string(),
      lessons: z.array(
        z.object({
          id: recordId,
          title: z.string(),
          duration_minutes: z.number().int(),
          preview: z.boolean(),
        }),
      ),
    }),
  ),
});

/** The outline of a course: public for published courses, like the course itself. */
export const courseOutlineRoute = defineRoute({
  method: 'GET',
  path: '/courses/{courseId}/outline',
  family: 'courses',
  operationId: 'getCourseOutline',
  summary: 'Read the curriculum outline of a course',
  description: 'Section and lesson titles with durations; lesson content needs curriculum:read.',
  scope: 'courses:read',
  access: 'public',
  params: z.strictObject({ courseId: recordId }),
  response: { status: 200, description: 'The outline', schema: outline },
  async handler({ params, caller, services }) {
    const course = await services.data.getRecord('course', params.courseId);
    if (course === null || !canSee(caller, course, false)) {
      throw new ApiError('not_found', `no course ${params.courseId}`);
    }
    const o = await courseOutline(services.data, course.id);
    return json(200, { course_id: course.id, title: course.data.title, ...o });
  },
});
