/**
 * Coupons: discount codes. The owner only (a code list is a business secret).
 * @module
 */
import { z } from 'zod';
import { recordFamily } from '../record-family.js';
import { instant, text } from '../schemas.js';

/** The coupons family. */
export const coupons = recordFamily({
  family: 'coupons',
  kind: 'coupon',
  collectionPath: '/coupons',
  idParam: 'couponId',
  idPrefix: 'cpn',
  singular: 'coupon',
  plural: 'coupons',
  schema: z.strictObject({
    code: text().regex(/^[A-Z0-9_-]{3,32}$/, 'must be 3 to 32 of A-Z, 0-9, _ and -'),
    percent_off: z.number().int().min(1).max(100),
    valid_until: instant.nullable().default(null),
    max_redemptions: z.number().int().min(1).nullable().default(null),
    active: z.boolean().default(true),
  }),
  readScope: 'coupons:read',
  readAccess: 'owner',
  write: { scope: 'coupons:write', access: 'owner' },
  isPublic: () => false,
  searchText: (c) => c.code,
});
