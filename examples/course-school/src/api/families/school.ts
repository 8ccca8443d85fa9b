/**
 * The school: name, contact and defaults. Signed-in users read it; the owner changes it.
 * @module
 */
import { z } from 'zod';
import { noHostileCharacters } from '../../edge/hostile-text.js';
import { currency, longText, text, title } from '../schemas.js';
import { singleton } from '../singleton.js';

/** The school family. */
export const school = singleton({
  family: 'school',
  kind: 'school',
  path: '/school',
  name: 'school',
  schema: z.strictObject({
    name: title(100),
    tagline: text().trim().max(200).default(''),
    description: longText(5000).default(''),
    // Shown as the owner wrote it: checked, not lower-cased like a sign-in email.
    contact_email: z.email().check(noHostileCharacters).max(254),
    currency,
    timezone: text().regex(
      /^[A-Za-z_]+(\/[A-Za-z_+-]+)*$/,
      'must be an IANA time zone such as Europe/London',
    ),
  }),
  read: { scope: 'school:read', access: 'user' },
  write: { scope: 'school:write', access: 'owner' },
});
