/**
 * Schemas shared by the resource families: ids, money, pagination, and the envelope of lists.
 * @module
 */
import { normalizeDisplayName } from 'portcullis';
import { z } from 'zod';
import { noHostileCharacters } from '../edge/hostile-text.js';

/**
 * Any string a client sends, and the start of every other string schema here: NUL, unpaired
 * surrogates and Unicode non-characters are refused (ABU-05, `edge/hostile-text.ts`), so the
 * issue reads `body.title contains U+0000, which is not accepted (...)`. Formats that are not built
 * from it (`z.email()`, `z.url()`) take the same check with `.check(noHostileCharacters)`.
 */
export const text = () => z.string().check(noHostileCharacters);

/** A record id: `<prefix>_<chars>`, e.g. `crs_analytical_engines`. */
export const recordId = text()
  .regex(/^[a-z]{2,5}_[A-Za-z0-9_-]{1,64}$/, 'must be an id such as crs_analytical_engines')
  .describe('Record identifier');

/** Generates an id for a new record. */
export function newId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`;
}

/** A non-empty single-line string, trimmed. */
export const title = (max = 200) => text().trim().min(1).max(max);

/**
 * A person's name as others will see it (pages, the `name` claim): hostile characters refused
 * (stripping a NUL would hide what the client sent), then the library's
 * `normalizeDisplayName` (NFC, no control, bidi or zero-width characters, blanks folded), then at
 * least one visible character and at most `max`. The same rule the library applies to `client_name`.
 */
export const displayName = (max = 100) =>
  text()
    .max(max * 4)
    .overwrite(normalizeDisplayName)
    .min(1, 'must contain visible characters')
    .max(max);

/** Long text (Markdown). */
export const longText = (max = 20_000) => text().max(max);

/** An amount in the currency's minor unit (cents). */
export const priceCents = z.number().int().min(0).max(100_000_000).describe('Amount in cents');

/** ISO 4217 code. */
export const currency = text()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD')
  .describe('ISO 4217 currency code');

/** An instant, ISO 8601 with offset. */
export const instant = z.iso
  .datetime({ offset: true })
  .check(noHostileCharacters)
  .describe('ISO 8601 date-time');

/** An https URL (no other scheme is shown to users). */
export const httpsUrl = z
  .url({ protocol: /^https$/ })
  .max(2000)
  .check(noHostileCharacters);

/** An email address, lower-cased. */
export const email = () => z.email().check(noHostileCharacters).max(254).toLowerCase();

/** `?limit=&cursor=`: every list is paginated by an opaque cursor. */
export const pageQuery = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(20)
    .describe('Items per page, 1 to 100 (default 20)'),
  cursor: text()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be the next_cursor of a previous page')
    .optional()
    .describe('The next_cursor of the previous page'),
});

/** The envelope of every list. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    next_cursor: z.string().nullable().describe('Cursor of the next page; null on the last page'),
  });
}

/** Fields every stored record shows. */
export const recordMeta = {
  id: recordId,
  created_at: instant,
  updated_at: instant,
};

/**
 * The body of a partial update (PATCH) of records of `schema`: every field optional and without
 * its default, so a field not sent is left as it is rather than reset to the default.
 */
export function patchOf<S extends z.ZodObject>(schema: S) {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const bare = field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field;
    shape[name] = (field.description === undefined ? bare : bare.describe(field.description)).optional();
  }
  return z
    .strictObject(shape)
    .refine((value) => Object.keys(value).length > 0, 'send at least one field to change');
}
