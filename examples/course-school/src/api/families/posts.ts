/**
 * Posts: articles and announcements. Signed-in users read published posts; the owner writes.
 * @module
 */
import { z } from 'zod';
import { recordFamily } from '../record-family.js';
import { instant, longText, text, title } from '../schemas.js';

/** The posts family. */
export const posts = recordFamily({
  family: 'posts',
  kind: 'post',
  collectionPath: '/posts',
  idParam: 'postId',
  idPrefix: 'pst',
  singular: 'post',
  plural: 'posts',
  schema: z.strictObject({
    title: title(),
    body: longText(50_000).default('').describe('Markdown'),
    status: z.enum(['draft', 'published']).default('draft'),
    published_at: instant.nullable().default(null),
    tags: z
      .array(text().regex(/^[a-z0-9-]{1,30}$/))
      .max(10)
      .default([]),
  }),
  readScope: 'posts:read',
  readAccess: 'user',
  write: { scope: 'posts:write', access: 'owner' },
  isPublic: (p) => p.status === 'published',
  searchText: (p) => `${p.title} ${p.tags.join(' ')}`,
});
