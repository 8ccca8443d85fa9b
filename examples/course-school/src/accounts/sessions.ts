/**
 * Login sessions: server-side records behind a signed cookie (Hono's signed cookies: the value and
 * its HMAC-SHA256). The cookie holds a random id; the store keeps only the id's SHA-256, so a
 * database leak yields no usable cookie and a forged cookie is refused before any lookup.
 *
 * Cookie attributes: `HttpOnly; SameSite=Lax; Path=/`, plus `Secure` and the `__Host-` prefix
 * when the issuer is https (ATK-28). On an http loopback issuer (local development) browsers would
 * drop a `Secure` cookie, so both are left out there, and only there.
 *
 * A verified cookie is remembered for {@link SESSION_CACHE_MS} (its session and user), so the
 * several requests of one authorization (consent page, decision) do not each pay the HMAC and two
 * lookups. A logout on this instance forgets it at once; a logout on another instance sharing the
 * database, or a session deleted by the expiry sweep, is seen within that window.
 * @module
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CookieOptions } from 'hono/utils/cookie';
import { parse, parseSigned, serialize, serializeSigned } from 'hono/utils/cookie';
import type { DataStore, SessionRecord, UserRecord } from '../data/store.js';

/** Sessions last 8 hours from login. */
export const SESSION_TTL_SECONDS = 8 * 3600;

/** How long a verified session cookie is remembered by this instance, in milliseconds. */
export const SESSION_CACHE_MS = 5000;

/** Cookies remembered at most; the oldest goes first. */
const SESSION_CACHE_MAX_ENTRIES = 10_000;

/** A signed-in visitor. */
export interface SignedIn {
  readonly user: UserRecord;
  readonly session: SessionRecord;
  /** The session's id hash (the library binds pending authorizations to it). */
  readonly sessionId: string;
}

/** Sessions of one server. */
export interface SessionManager {
  /** The cookie's name: `__Host-cs_session` on https, `cs_session` on http loopback. */
  readonly cookieName: string;
  /** Whether cookies get `Secure` and the `__Host-` prefix (https issuer). */
  readonly secure: boolean;
  /** The key that signs cookies (also the login form's CSRF cookie). */
  readonly secret: string;
  /** Attributes of every cookie this server sets, with `maxAge` in seconds (0 deletes). */
  cookieOptions(maxAge: number): CookieOptions;
  /** Creates a session for a user who just logged in; returns its `Set-Cookie` value. */
  create(user: UserRecord, now: number): Promise<{ setCookie: string; session: SessionRecord }>;
  /** The visitor of a request, from its `Cookie` header; null when not signed in. */
  read(cookieHeader: string | undefined, now: number): Promise<SignedIn | null>;
  /** Ends a session; returns the `Set-Cookie` value that deletes the cookie. */
  destroy(signedIn: SignedIn): Promise<string>;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/**
 * Whether a `Cookie` header carries one of `names` more than once. A browser sends two cookies of
 * one name when another origin of the same host (any port on an `http://` loopback issuer; a
 * sibling subdomain without `__Host-`) planted a second one with a longer `Path`, which comes
 * first: reading either would sign the victim into the planter's account. Such a request is
 * refused, never guessed at.
 */
export function repeatsCookie(cookieHeader: string | undefined, names: readonly string[]): boolean {
  if (cookieHeader === undefined) return false;
  const seen = new Set<string>();
  for (const pair of cookieHeader.split(';')) {
    const eq = pair.indexOf('=');
    const name = (eq === -1 ? pair : pair.slice(0, eq)).trim();
    if (!names.includes(name)) continue;
    if (seen.has(name)) return true;
    seen.add(name);
  }
  return false;
}

/** Compares two strings in constant time (length leaks, which is public here). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Creates the session manager.
 *
 * @param data - where sessions live
 * @param secret - the HMAC key (kept in the database so cookies survive restarts)
 * @param secure - true when the issuer is https
 */
export function createSessionManager(data: DataStore, secret: string, secure: boolean): SessionManager {
  const cookieName = secure ? '__Host-cs_session' : 'cs_session';
  const cookieOptions = (maxAge: number): CookieOptions => ({
    path: '/',
    httpOnly: true,
    secure,
    sameSite: 'Lax',
    maxAge,
  });
  // Keyed by the whole signed cookie value: only values that passed the HMAC check get in.
  const remembered = new Map<string, { readonly signedIn: SignedIn; readonly until: number }>();

  return {
    cookieName,
    secure,
    secret,
    cookieOptions,
    async create(user, now) {
      const id = randomBytes(32).toString('base64url');
      const session: SessionRecord = {
        idHash: sha256(id),
        userId: user.id,
        authTime: now,
        csrfToken: randomBytes(24).toString('base64url'),
        expiresAt: now + SESSION_TTL_SECONDS * 1000,
      };
      await data.createSession(session);
      const setCookie = await serializeSigned(cookieName, id, secret, cookieOptions(SESSION_TTL_SECONDS));
      return { setCookie, session };
    },
    async read(cookieHeader, now) {
      if (cookieHeader === undefined) return null;
      const value = parse(cookieHeader, cookieName)[cookieName];
      if (value === undefined) return null;
      const hit = remembered.get(value);
      if (hit !== undefined) {
        if (hit.until > now) return hit.signedIn;
        remembered.delete(value);
      }
      const id = (await parseSigned(cookieHeader, secret, cookieName))[cookieName];
      if (typeof id !== 'string') return null;
      const session = await data.getSession(sha256(id), now);
      if (session === null) return null;
      const user = await data.getUser(session.userId);
      if (user === null) return null;
      const signedIn: SignedIn = { user, session, sessionId: session.idHash };
      if (remembered.size >= SESSION_CACHE_MAX_ENTRIES)
        remembered.delete(remembered.keys().next().value as string);
      remembered.set(value, { signedIn, until: Math.min(now + SESSION_CACHE_MS, session.expiresAt) });
      return signedIn;
    },
    async destroy(signedIn) {
      for (const [value, entry] of remembered) {
        if (entry.signedIn.session.idHash === signedIn.session.idHash) remembered.delete(value);
      }
      await data.deleteSession(signedIn.session.idHash);
      return serialize(cookieName, '', cookieOptions(0));
    },
  };
}
