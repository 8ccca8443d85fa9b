/**
 * Forms (contact, feedback) with their submission counts: read-only, the owner only.
 * @module
 */
import { z } from 'zod';
import { recordFamily } from '../record-family.js';
import { text, title } from '../schemas.js';

/** The forms family. */
export const forms = recordFamily({
  family: 'forms',
  kind: 'form',
  collectionPath: '/forms',
  idParam: 'formId',
  idPrefix: 'frm',
  singular: 'form',
  plural: 'forms',
  schema: z.strictObject({
    title: title(),
    fields: z
      .array(
        z.strictObject({
          name: text().regex(/^[a-z_]{1,40}$/),
          label: title(100),
          type: z.enum(['text', 'email', 'textarea', 'checkbox']),
          required: z.boolean(),
        }),
      )
      .min(1)
      .max(50),
    submission_count: z.number().int().min(0),
  }),
  readScope: 'forms:read',
  readAccess: 'owner',
  isPublic: () => false,
});
