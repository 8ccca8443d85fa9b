/**
 * A strict reader of `WWW-Authenticate: Bearer` challenges (RFC 6750 §3, RFC 9110 §11.6.1), so tests
 * assert the syntax clients parse rather than substrings: one challenge, scheme `Bearer`, every
 * parameter quoted, none repeated, values within the RFC 6750 §3 character set.
 */

export interface BearerChallenge {
  /** The scheme as sent (`Bearer`). */
  readonly scheme: string;
  /** Parameter name (lower-cased) → unquoted value. */
  readonly params: Readonly<Record<string, string>>;
}

// RFC 6750 §3: error, error_description and scope values use %x20-21 / %x23-5B / %x5D-7E.
const VALUE = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/;
const PARAM = /^([A-Za-z_][A-Za-z0-9_-]*)="([^"\\]*)"\s*(,\s*|$)/;

/** Parses one Bearer challenge; throws with a reason when the syntax is not the RFC's. */
export function parseBearerChallenge(header: string | undefined): BearerChallenge {
  if (header === undefined) throw new Error('no WWW-Authenticate header');
  const space = header.indexOf(' ');
  const scheme = space === -1 ? header : header.slice(0, space);
  if (scheme !== 'Bearer') throw new Error(`scheme is '${scheme}', expected 'Bearer'`);
  const params: Record<string, string> = {};
  let rest = space === -1 ? '' : header.slice(space + 1).trim();
  while (rest.length > 0) {
    const m = PARAM.exec(rest);
    if (m === null) throw new Error(`unquoted or malformed parameter at: ${rest}`);
    const name = m[1]!.toLowerCase();
    if (name in params) throw new Error(`parameter '${name}' appears twice in: ${header}`);
    if (!VALUE.test(m[2]!)) throw new Error(`parameter '${name}' has characters outside RFC 6750 §3`);
    params[name] = m[2]!;
    rest = rest.slice(m[0].length);
  }
  return { scheme, params };
}
