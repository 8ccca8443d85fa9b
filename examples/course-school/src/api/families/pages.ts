/**
 * Pages of the school site: public pages are in the catalog (anyone reads them); the owner writes.
 * @module
 */
import { z } from 'zod';
import { recordFamily } from '../record-family.js';
import { longText, text, title } from '../schemas.js';

/** The pages family. */
export const pages = recordFamily({
  family: 'pages',
  kind: 'page',
  collectionPath: '/pages',
  idParam: 'pageId',
  idPrefix: 'pag',
  singular: 'page',
  plural: 'pages',
  schema: z.strictObject({
    slug: text()
      .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'must be lower-case words joined by -')
      .max(100),
    title: title(),
    body: longText(50_000).default('').describe('Markdown'),
    visibility: z.enum(['public', 'private']).default('private'),
  }),
  readScope: 'pages:read',
  readAccess: 'public',
  write: { scope: 'pages:write', access: 'owner' },
  isPublic: (p) => p.visibility === 'public',
  searchText: (p) => `${p.slug} ${p.title}`,
});
