/**
 * Events: live sessions and meetups. Signed-in users see published events; the owner manages them.
 * @module
 */
import { z } from 'zod';
import { ApiError } from '../errors.js';
import { recordFamily } from '../record-family.js';
import { httpsUrl, instant, longText, title } from '../schemas.js';

/** The events family. */
export const events = recordFamily({
  family: 'events',
  kind: 'event',
  collectionPath: '/events',
  idParam: 'eventId',
  idPrefix: 'evt',
  singular: 'event',
  plural: 'events',
  schema: z.strictObject({
    title: title(),
    description: longText().default(''),
    starts_at: instant,
    ends_at: instant,
    location: z.enum(['online', 'in_person']).default('online'),
    url: httpsUrl.nullable().default(null),
    capacity: z.number().int().min(1).max(100_000).nullable().default(null),
    status: z.enum(['draft', 'published']).default('draft'),
  }),
  readScope: 'events:read',
  readAccess: 'user',
  write: { scope: 'events:write', access: 'owner' },
  isPublic: (e) => e.status === 'published',
  searchText: (e) => e.title,
  async validate(event) {
    if (Date.parse(event.ends_at) <= Date.parse(event.starts_at)) {
      throw new ApiError('invalid_request', 'an event must end after it starts', {
        issues: [{ path: 'body.ends_at', message: 'must be after starts_at' }],
      });
    }
  },
});
