/**
 * Lecturers: the people who teach. Signed-in users read; the owner manages.
 * @module
 */
import { z } from 'zod';
import { recordFamily } from '../record-family.js';
import { httpsUrl, longText, title } from '../schemas.js';

/** The lecturers family. */
export const lecturers = recordFamily({
  family: 'lecturers',
  kind: 'lecturer',
  collectionPath: '/lecturers',
  idParam: 'lecturerId',
  idPrefix: 'lec',
  singular: 'lecturer',
  plural: 'lecturers',
  schema: z.strictObject({
    name: title(100),
    bio: longText(5000).default(''),
    avatar_url: httpsUrl.nullable().default(null),
  }),
  readScope: 'lecturers:read',
  readAccess: 'user',
  write: { scope: 'lecturers:write', access: 'owner' },
  isPublic: () => true,
  searchText: (l) => l.name,
});
