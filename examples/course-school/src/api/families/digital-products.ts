/**
 * Digital products: e-books, templates. Signed-in users see published ones; the owner manages them.
 * @module
 */
import { z } from 'zod';
import { recordFamily } from '../record-family.js';
import { currency, longText, priceCents, text, title } from '../schemas.js';

/** The digital-products family. */
export const digitalProducts = recordFamily({
  family: 'digital_products',
  kind: 'digital_product',
  collectionPath: '/digital-products',
  idParam: 'productId',
  idPrefix: 'dgp',
  singular: 'digital product',
  plural: 'digital products',
  schema: z.strictObject({
    title: title(),
    description: longText(5000).default(''),
    price_cents: priceCents,
    currency,
    file_name: text().regex(/^[\w.-]{1,100}$/, 'must be a plain file name'),
    status: z.enum(['draft', 'published']).default('draft'),
  }),
  readScope: 'digital_products:read',
  readAccess: 'user',
  write: { scope: 'digital_products:write', access: 'owner' },
  isPublic: (p) => p.status === 'published',
  searchText: (p) => p.title,
});
