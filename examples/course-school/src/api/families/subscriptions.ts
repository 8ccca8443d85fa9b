/**
 * Subscriptions to membership plans. A signed-in user subscribes, reads and cancels their own;
 * the owner sees and manages all.
 * @module
 */
import { z } from 'zod';
import { ApiError } from '../errors.js';
import { isOwner, recordFamily } from '../record-family.js';
import { instant, recordId } from '../schemas.js';

/** The subscriptions family. */
export const subscriptions = recordFamily({
  family: 'subscriptions',
  kind: 'subscription',
  collectionPath: '/subscriptions',
  idParam: 'subscriptionId',
  idPrefix: 'sub',
  singular: 'subscription',
  plural: 'subscriptions',
  schema: z.strictObject({
    plan_id: recordId,
    status: z.enum(['active', 'canceled']).default('active'),
    renews_at: instant.nullable().default(null),
  }),
  readScope: 'subscriptions:read',
  readAccess: 'user',
  write: { scope: 'subscriptions:write', access: 'user' },
  ownedByCaller: true,
  isPublic: () => false,
  async validate(subscription, { caller, services }) {
    const plan = await services.data.getRecord('membership_plan', subscription.plan_id);
    // Private plans are by invitation: only the owner subscribes someone to one.
    if (plan === null || (!plan.isPublic && !isOwner(caller))) {
      throw new ApiError('invalid_request', `no membership plan ${subscription.plan_id}`, {
        issues: [{ path: 'body.plan_id', message: 'no such plan' }],
      });
    }
  },
});
