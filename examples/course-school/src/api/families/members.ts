/**
 * Members: the school's team (administrators, editors, support). The owner only.
 * @module
 */
import { z } from 'zod';
import { recordFamily } from '../record-family.js';
import { email, title } from '../schemas.js';

/** The members family. */
export const members = recordFamily({
  family: 'members',
  kind: 'member',
  collectionPath: '/members',
  idParam: 'memberId',
  idPrefix: 'mem',
  singular: 'member',
  plural: 'members',
  schema: z.strictObject({
    name: title(),
    email: email(),
    role: z.enum(['admin', 'editor', 'support']),
  }),
  readScope: 'members:read',
  readAccess: 'owner',
  write: { scope: 'members:write', access: 'owner' },
  isPublic: () => false,
  searchText: (m) => `${m.name} ${m.email}`,
});
