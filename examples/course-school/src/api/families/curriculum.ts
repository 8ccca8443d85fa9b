/**
 * Curriculum: the sections and lessons of a course, nested under it. They are visible to whoever
 * may see the course; lesson content needs `curriculum:read` (the outline route shows titles only).
 * @module
 */
import { z } from 'zod';
import { allRecords } from '../catalog.js';
import { ApiError } from '../errors.js';
import { recordFamily } from '../record-family.js';
import { httpsUrl, longText, recordId, title } from '../schemas.js';

const position = z.number().int().min(0).max(10_000).default(0).describe('Order within the course');

/** Sections of a course. */
export const sections = recordFamily({
  family: 'curriculum',
  kind: 'section',
  collectionPath: '/courses/{courseId}/sections',
  idParam: 'sectionId',
  idPrefix: 'sec',
  singular: 'section',
  plural: 'sections',
  schema: z.strictObject({ title: title(), position }),
  readScope: 'curriculum:read',
  readAccess: 'user',
  write: { scope: 'curriculum:write', access: 'owner' },
  parent: { kind: 'course', param: 'courseId', field: 'course_id', in: 'path' },
  // Visibility follows the course, which the nesting already checks.
  isPublic: () => true,
  async beforeDelete(section, { services }) {
    const lessons = await allRecords(services.data, 'lesson', { parentId: section.parentId ?? '' });
    if (lessons.some((l) => l.data.section_id === section.id)) {
      throw new ApiError('conflict', 'the section still has lessons: move or delete them first');
    }
  },
});

/** Lessons of a course. */
export const lessons = recordFamily({
  family: 'curriculum',
  kind: 'lesson',
  collectionPath: '/courses/{courseId}/lessons',
  idParam: 'lessonId',
  idPrefix: 'les',
  singular: 'lesson',
  plural: 'lessons',
  schema: z.strictObject({
    title: title(),
    section_id: recordId.nullable().default(null).describe('The section it is in, or null'),
    position,
    duration_minutes: z.number().int().min(0).max(1440).default(0),
    content: longText(50_000).default('').describe('Markdown'),
    video_url: httpsUrl.nullable().default(null),
    preview: z.boolean().default(false).describe('Free preview lesson'),
  }),
  readScope: 'curriculum:read',
  readAccess: 'user',
  write: { scope: 'curriculum:write', access: 'owner' },
  parent: { kind: 'course', param: 'courseId', field: 'course_id', in: 'path' },
  isPublic: () => true,
  searchText: (l) => l.title,
  async validate(lesson, { params, services }) {
    if (lesson.section_id === null) return;
    const section = await services.data.getRecord('section', lesson.section_id);
    if (section === null || section.parentId !== params.courseId) {
      throw new ApiError('invalid_request', `no section ${lesson.section_id} in this course`, {
        issues: [{ path: 'body.section_id', message: 'not a section of this course' }],
      });
    }
  },
});
