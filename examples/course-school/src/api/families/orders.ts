/**
 * Orders: read-only (the area has no `:write` scope). The owner sees every order; a student sees
 * their own purchases.
 * @module
 */
import { z } from 'zod';
import { recordFamily } from '../record-family.js';
import { currency, priceCents, recordId, text, title } from '../schemas.js';

/** The orders family. */
export const orders = recordFamily({
  family: 'orders',
  kind: 'order',
  collectionPath: '/orders',
  idParam: 'orderId',
  idPrefix: 'ord',
  singular: 'order',
  plural: 'orders',
  schema: z.strictObject({
    items: z
      .array(
        z.strictObject({
          kind: z.enum(['course', 'membership_plan', 'digital_product']),
          id: recordId,
          title: title(),
          price_cents: priceCents,
        }),
      )
      .min(1),
    total_cents: priceCents,
    currency,
    coupon_code: text().nullable().default(null),
    status: z.enum(['pending', 'paid', 'refunded']),
  }),
  readScope: 'orders:read',
  readAccess: 'user',
  ownedByCaller: true,
  isPublic: () => false,
});
