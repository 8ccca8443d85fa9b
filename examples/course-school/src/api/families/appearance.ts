/**
 * The school's theme. Signed-in users read it (an app may render the school's colours); the
 * owner changes it.
 * @module
 */
import { z } from 'zod';
import { httpsUrl, text } from '../schemas.js';
import { singleton } from '../singleton.js';

const color = text().regex(/^#[0-9a-f]{6}$/, 'must be a colour such as #1d4ed8');

/** The appearance family. */
export const appearance = singleton({
  family: 'appearance',
  kind: 'appearance',
  path: '/appearance',
  name: 'appearance',
  schema: z.strictObject({
    primary_color: color,
    accent_color: color,
    font: z.enum(['system', 'serif', 'monospace']).default('system'),
    logo_url: httpsUrl.nullable().default(null),
    dark_mode: z.boolean().default(false),
  }),
  read: { scope: 'appearance:read', access: 'user' },
  write: { scope: 'appearance:write', access: 'owner' },
});
