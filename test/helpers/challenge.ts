/**
 * A strict reader of `WWW-Authenticate` challenges (RFC 6750 §3, RFC 9110 §11.6.1, RFC 9449 §7.1),
 * so tests assert the syntax clients parse rather than substrings: the header is a list of
 * challenges, each a scheme followed by quoted parameters, none repeated within a challenge,
 * values within the RFC 6750 §3 character set. A resource that accepts DPoP sends `Bearer` first,
 * then `DPoP algs="…"`.
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
const SCHEME = /^([A-Za-z][A-Za-z0-9_-]*)(?: +|\s*,\s*|$)/;

/** Parses every challenge of a header; throws with a reason when the syntax is not the RFC's. */
export function parseChallenges(header: string | undefined): BearerChallenge[] {
  if (header === undefined) throw new Error('no WWW-Authenticate header');
  const challenges: { scheme: string; params: Record<string, string> }[] = [];
  let rest = header.trim();
  while (rest.length > 0) {
    const param = PARAM.exec(rest);
    if (param !== null && challenges.length > 0) {
      const current = challenges[challenges.length - 1]!;
      const name = param[1]!.toLowerCase();
      if (name in current.params) throw new Error(`parameter '${name}' appears twice in: ${header}`);
      if (!VALUE.test(param[2]!)) throw new Error(`parameter '${name}' has characters outside RFC 6750 §3`);
      current.params[name] = param[2]!;
      rest = rest.slice(param[0].length);
      continue;
    }
    const scheme = SCHEME.exec(rest);
    if (scheme === null) throw new Error(`unquoted or malformed parameter at: ${rest}`);
    challenges.push({ scheme: scheme[1]!, params: {} });
    rest = rest.slice(scheme[0].length);
  }
  return challenges;
}

/**
 * Parses the header and returns its Bearer challenge, which must come first (clients written before
 * DPoP read the first challenge only). Any other challenge must be `DPoP` with `algs`.
 */
export function parseBearerChallenge(header: string | undefined): BearerChallenge {
  const [first, ...others] = parseChallenges(header);
  if (first === undefined) throw new Error('no challenge');
  if (first.scheme !== 'Bearer') throw new Error(`scheme is '${first.scheme}', expected 'Bearer'`);
  for (const other of others) {
    if (other.scheme !== 'DPoP') throw new Error(`unexpected challenge '${other.scheme}' in: ${header}`);
    if (other.params.algs === undefined) throw new Error(`the DPoP challenge has no algs: ${header}`);
  }
  return first;
}

/** The DPoP challenge of a header (RFC 9449 §7.1); throws when there is none. */
export function parseDpopChallenge(header: string | undefined): BearerChallenge {
  const dpop = parseChallenges(header).find((c) => c.scheme === 'DPoP');
  if (dpop === undefined) throw new Error(`no DPoP challenge in: ${header}`);
  return dpop;
}
