/**
 * Students: learners enrolled in the school. School administration: the owner only.
 * @module
 */
import { z } from 'zod';
import { ApiError } from '../errors.js';
import { recordFamily } from '../record-family.js';
import { email, recordId, title } from '../schemas.js';

/** The students family. */
export const students = recordFamily({
  family: 'students',
  kind: 'student',
  collectionPath: '/students',
  idParam: 'studentId',
  idPrefix: 'stu',
  singular: 'student',
  plural: 'students',
  schema: z.strictObject({
    name: title(),
    email: email(),
    status: z.enum(['active', 'suspended']).default('active'),
    enrolled_course_ids: z.array(recordId).max(500).default([]),
  }),
  readScope: 'students:read',
  readAccess: 'owner',
  write: { scope: 'students:write', access: 'owner' },
  isPublic: () => false,
  searchText: (s) => `${s.name} ${s.email}`,
  async validate(student, { services }) {
    for (const id of student.enrolled_course_ids) {
      if ((await services.data.getRecord('course', id)) === null) {
        throw new ApiError('invalid_request', `no course ${id}`, {
          issues: [{ path: 'body.enrolled_course_ids', message: `no course ${id}` }],
        });
      }
    }
  },
});
