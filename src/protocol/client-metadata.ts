/**
 * Field rules for self-asserted client metadata, shared by dynamic registration (RFC 7591) and
 * Client ID Metadata Documents. Display text and URLs are stored raw and escaped wherever shown;
 * these rules cap their size and keep out what would lie on screen. Per field:
 * - `client_name` (shown to users on the consent page): normalised to NFC, bidi controls,
 *   zero-width and other format characters and control characters removed, blanks folded into
 *   single spaces, trimmed; refused when nothing visible is left. Stripping rather than refusing
 *   keeps honest names working (an emoji joined with U+200D, a right-to-left mark in an Arabic or
 *   Hebrew name) while no name can reorder or hide text; the registration response echoes the
 *   effective name (RFC 7591 §3.2.1 lets the server replace a value).
 * - `software_id`, `software_version`, `contacts` (identifiers and addresses, not prose): control
 *   and format characters refused, as no honest value has one.
 * - URLs: the raw-string https grammar of `protocol/url.ts`, ASCII only.
 * NUL, unpaired surrogates and non-characters never get this far: the JSON parser refuses them.
 * @see RFC 7591 §2, §3.2.1, §5 (self-asserted metadata); OAuth 2.1 §7.11
 * @module
 */
import { z } from 'zod';
import { MAX_URL_LENGTH, parseHttpsUrl } from './url.js';

// Control and format characters (bidi overrides, zero-width joiners) make names that lie on screen.
const DISPLAY_TEXT = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]*$/u;

/**
 * A zod schema for identifier-like text (`software_id`, `software_version`, `contacts`): at most
 * `max` characters, no control, format or line/paragraph separator characters (refused, not stripped).
 *
 * @param max - the length cap
 * @returns the schema
 * @see RFC 7591 §2; OAuth 2.1 §7.11
 * @example
 * ```ts
 * displayText(200).safeParse('My\u202eApp').success; // false (right-to-left override)
 * ```
 */
export const displayText = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .regex(DISPLAY_TEXT, 'must not contain control or formatting characters');

// Control (Cc), format (Cf: bidi embeddings, overrides and isolates U+202A..202E, U+2066..2069,
// marks U+200E/200F/061C, zero-width U+200B..200D, U+2060, U+FEFF, soft hyphen, tags) and
// line/paragraph separators; blanks (Zs) fold into one space.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu;
const BLANKS = /\p{Zs}+/gu;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const SPACES = / {2,}/g;

/**
 * A display name as users should see it: NFC, without control, bidi, zero-width or other format
 * characters (a control or separator between words becomes a space), blanks folded into single
 * spaces, trimmed. The library applies it to `client_name`; hosts can apply it to names they show
 * or release as claims.
 *
 * @param text - a name as a client or user supplied it
 * @returns the name as shown; empty when nothing visible was in it
 * @see RFC 7591 §5; Unicode UAX #9 (bidi controls), UAX #15 (NFC)
 * @example
 * ```ts
 * import { normalizeDisplayName } from 'portcullis';
 *
 * normalizeDisplayName('Pay\u202eLAP\u202c'); // 'PayLAP'
 * normalizeDisplayName('  Dev\u200b\nTools '); // 'Dev Tools'
 * ```
 * @group Client Registration (RFC 7591)
 */
export function normalizeDisplayName(text: string): string {
  // Printable ASCII (most names) is already NFC and holds no control or format character: only
  // the runs of spaces are folded.
  if (PRINTABLE_ASCII.test(text)) return text.replace(SPACES, ' ').trim();
  return text
    .normalize('NFC')
    .replace(INVISIBLE, (run) => (/[\t\n\v\f\r\u0085\u2028\u2029]/.test(run) ? ' ' : ''))
    .replace(BLANKS, ' ')
    .trim();
}

/**
 * A zod schema for a display name (`client_name`): at most `max` characters after
 * {@link normalizeDisplayName}, which it applies (the parsed value is the normalised name), and at
 * least one visible character.
 *
 * @param max - the length cap, applied to the normalised name
 * @returns the schema
 * @see RFC 7591 §2, §3.2.1
 * @example
 * ```ts
 * displayName(200).parse('My\u202eApp'); // 'MyApp'
 * ```
 */
export const displayName = (max: number) =>
  z
    .string()
    .max(max * 4, `must be at most ${max} characters`)
    .transform(normalizeDisplayName)
    .pipe(z.string().min(1, 'must contain visible characters').max(max, `must be at most ${max} characters`));

/**
 * A zod schema for a metadata URL (`client_uri`, `logo_uri`, `policy_uri`, `tos_uri`): an https URL
 * by the raw-string grammar of `protocol/url.ts` (no user info, no fragment, no numeric host forms).
 * `javascript:` and `data:` URLs therefore never pass.
 *
 * @see RFC 7591 §2, §5
 * @example
 * ```ts
 * httpsUri.safeParse('javascript:alert(1)').success; // false
 * ```
 */
export const httpsUri = z
  .string()
  .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`)
  .superRefine((value, ctx) => {
    const result = parseHttpsUrl(value);
    if (!result.ok) ctx.addIssue({ code: 'custom', message: `must be an https URL: it ${result.problem}` });
  });

/**
 * The RFC 7591 §2 members that dynamic registration and metadata documents both accept, with the
 * same rules (zod shape). Each caller adds what differs: which members are required, and how
 * `token_endpoint_auth_method` and `application_type` are decided.
 *
 * @see RFC 7591 §2
 * @example
 * ```ts
 * const schema = z.object({ ...clientMetadataFields, client_name: displayText(200) });
 * ```
 */
export const clientMetadataFields = {
  redirect_uris: z.array(z.string(), 'must be an array of strings'),
  grant_types: z.array(z.string(), 'must be an array of strings').optional(),
  response_types: z.array(z.string(), 'must be an array of strings').optional(),
  client_name: displayName(200).optional(),
  client_uri: httpsUri.optional(),
  logo_uri: httpsUri.optional(),
  policy_uri: httpsUri.optional(),
  tos_uri: httpsUri.optional(),
  contacts: z.array(displayText(320)).max(10, 'at most 10 contacts').optional(),
  scope: z.string().max(4096).optional(),
  software_id: displayText(200).optional(),
  software_version: displayText(200).optional(),
  id_token_signed_response_alg: z.enum(['RS256', 'ES256'], 'must be RS256 or ES256').optional(),
  dpop_bound_access_tokens: z.boolean('must be true or false').optional(),
};

/** The grant types a client may hold: the authorization code flow and its refresh tokens. */
export const SUPPORTED_GRANT_TYPES: ReadonlySet<string> = new Set(['authorization_code', 'refresh_token']);

/**
 * Checks `grant_types` and `response_types` against what this server offers and against each
 * other (RFC 7591 §2.1: the `code` response type needs the `authorization_code` grant).
 *
 * @param grantTypes - the effective grant types
 * @param responseTypes - the effective response types
 * @param extraGrants - further grant types this client may hold (`client_credentials` where
 *   enabled); a client holding only those needs no response type
 * @returns `undefined`, or `[field, problem]` for the first rule broken
 * @see RFC 7591 §2.1
 * @example
 * ```ts
 * grantTypesProblem(['refresh_token'], ['code']); // ['grant_types', "the 'code' response type needs ..."]
 * ```
 */
export function grantTypesProblem(
  grantTypes: readonly string[],
  responseTypes: readonly string[],
  extraGrants: ReadonlySet<string> = new Set(),
): readonly [field: string, problem: string] | undefined {
  for (const g of grantTypes) {
    if (!SUPPORTED_GRANT_TYPES.has(g) && !extraGrants.has(g)) {
      return ['grant_types', `'${g}' is not supported; use authorization_code and refresh_token`];
    }
  }
  for (const r of responseTypes) {
    if (r !== 'code') return ['response_types', `'${r}' is not supported; use code`];
  }
  const withoutCode = grantTypes.length > 0 && grantTypes.every((g) => extraGrants.has(g));
  if (withoutCode && responseTypes.length === 0) return undefined;
  if (responseTypes.length === 0 || !grantTypes.includes('authorization_code')) {
    return [
      'grant_types',
      "the 'code' response type needs the authorization_code grant (RFC 7591 section 2.1)",
    ];
  }
  return undefined;
}
