/**
 * Membership plans: public plans are in the catalog (anyone may read them); the owner manages them.
 * @module
 */
import { z } from 'zod';
import { recordFamily } from '../record-family.js';
import { currency, longText, priceCents, text, title } from '../schemas.js';

/** The membership-plans family. */
export const membershipPlans = recordFamily({
  family: 'membership_plans',
  kind: 'membership_plan',
  collectionPath: '/membership-plans',
  idParam: 'planId',
  idPrefix: 'pln',
  singular: 'membership plan',
  plural: 'membership plans',
  schema: z.strictObject({
    name: title(100),
    description: longText(2000).default(''),
    price_cents: priceCents,
    currency,
    interval: z.enum(['month', 'year', 'once']),
    features: z.array(text().trim().min(1).max(200)).max(30).default([]),
    visibility: z
      .enum(['public', 'private'])
      .default('public')
      .describe('Private plans are sold by invitation'),
  }),
  readScope: 'membership_plans:read',
  readAccess: 'public',
  write: { scope: 'membership_plans:write', access: 'owner' },
  isPublic: (p) => p.visibility === 'public',
  searchText: (p) => p.name,
});
