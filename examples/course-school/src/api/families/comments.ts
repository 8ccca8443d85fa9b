/**
 * Comments on posts: read-only (the area has no `:write` scope). Approved comments are visible
 * to signed-in users; the owner also sees those awaiting moderation.
 * @module
 */
import { z } from 'zod';
import { recordFamily } from '../record-family.js';
import { text, title } from '../schemas.js';

/** The comments family. */
export const comments = recordFamily({
  family: 'comments',
  kind: 'comment',
  collectionPath: '/comments',
  idParam: 'commentId',
  idPrefix: 'cmt',
  singular: 'comment',
  plural: 'comments',
  schema: z.strictObject({
    author_name: title(100),
    body: text().min(1).max(5000),
    status: z.enum(['pending', 'approved']),
  }),
  readScope: 'comments:read',
  readAccess: 'user',
  parent: { kind: 'post', param: 'post_id', field: 'post_id', in: 'query' },
  isPublic: (c) => c.status === 'approved',
});
