/**
 * Hostile characters, refused on every route of this server as the library refuses them on its own
 * endpoints (ABU-05), with the library's own check (`hostileCharacter` of `portcullis`): NUL
 * (PostgreSQL cannot store it in text, SQLSTATE 22021), unpaired surrogates (no UTF-8 carries one:
 * PostgreSQL refuses the `\ud800` escape in `jsonb`, 22P05, and SQLite silently replaces it) and
 * Unicode non-characters. They are refused when the request is parsed, `400` with a description
 * naming the field and the character, so that such a string reaches no query, log or page:
 * - {@link noHostileCharacters}: the zod check that every string a client sends passes (the API's
 *   bodies, path and query parameters, the MCP tools' arguments, the page forms: `text()` of
 *   `api/schemas.ts`);
 * - {@link hostileInJson}: a hostile string of a whole JSON message, located (`/mcp`, before the
 *   MCP SDK sees it);
 * - {@link hostileInQuery}: the first hostile query parameter of a page request.
 * @module
 */
import { hostileCharacter } from 'portcullis';
import type { z } from 'zod';

/** What follows "contains U+XXXX" in every description. */
const REASON = 'which is not accepted (NUL, unpaired surrogates and Unicode non-characters never are)';

/**
 * Why `value` is refused, as `<what> contains U+XXXX, which is not accepted (...)`, or `undefined`
 * when it holds no hostile character.
 *
 * @param what - what the value is, e.g. `the query parameter 'q'`
 * @param value - the string a client sent
 */
export function hostileProblem(what: string, value: string): string | undefined {
  const found = hostileCharacter(value);
  return found === undefined ? undefined : `${what} contains ${found}, ${REASON}`;
}

/**
 * The zod check refusing a string that holds a hostile character; the issue reads
 * `contains U+0000, which is not accepted (...)`, located by the caller (`body.title contains ...`).
 * Pass it to `.check()` of a string schema before any transformation (`.trim()`, `.overwrite()`),
 * so that it sees what the client sent.
 */
export const noHostileCharacters: z.core.CheckFn<string> = (payload) => {
  const found = hostileCharacter(payload.value);
  if (found !== undefined) {
    payload.issues.push({ code: 'custom', message: `contains ${found}, ${REASON}`, input: payload.value });
  }
};

/** Where a value sits in a JSON message: its member or index, under its parent. */
interface Place {
  readonly parent: Place | undefined;
  readonly key: string;
}

/** `params.arguments.query` for a place; the first segments only of a very deep one. */
function pathOf(place: Place | undefined): string {
  const keys: string[] = [];
  for (let at = place; at !== undefined; at = at.parent) keys.push(at.key);
  keys.reverse();
  const shown = keys.length > 8 ? [...keys.slice(0, 8), '...'] : keys;
  return shown.map((key) => (key.length > 40 ? `${key.slice(0, 40)}...` : key)).join('.');
}

/** A hostile string found in a JSON message. */
export interface HostileJson {
  /** `params.arguments.query contains U+0000, which is not accepted (...)`. */
  readonly description: string;
  /** The top-level member it is under (`params`), or `undefined` for the value itself or a top-level name. */
  readonly member: string | undefined;
}

/** The top-level member of a place. */
function topOf(place: Place | undefined): string | undefined {
  let at = place;
  while (at?.parent !== undefined) at = at.parent;
  return at?.key;
}

/**
 * Why a parsed JSON value is refused: a string (member names included, at any depth) holding a
 * hostile character, located; or `undefined`. Iterative, so that a deeply nested message cannot
 * exhaust the stack; a member name is never echoed, only its place.
 *
 * @param value - a value from `JSON.parse`
 */
export function hostileInJson(value: unknown): HostileJson | undefined {
  const pending: [unknown, Place | undefined][] = [[value, undefined]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, place] = next;
    if (typeof item === 'string') {
      const problem = hostileProblem(place === undefined ? 'the message' : pathOf(place), item);
      if (problem !== undefined) return { description: problem, member: topOf(place) };
    } else if (Array.isArray(item)) {
      item.forEach((element, index) => {
        pending.push([element, { parent: place, key: String(index) }]);
      });
    } else if (typeof item === 'object' && item !== null) {
      for (const [key, member] of Object.entries(item)) {
        const named = hostileCharacter(key);
        if (named !== undefined) {
          const where = place === undefined ? '' : ` in ${pathOf(place)}`;
          return { description: `a member name${where} contains ${named}, ${REASON}`, member: topOf(place) };
        }
        pending.push([member, { parent: place, key }]);
      }
    }
  }
  return undefined;
}

/**
 * Why a request's query is refused: the first parameter whose name or value holds a hostile
 * character (as the handlers would read it, percent-decoded), or `undefined`.
 *
 * @param queries - every parameter with all its values (Hono's `c.req.queries()`)
 */
export function hostileInQuery(queries: Readonly<Record<string, readonly string[]>>): string | undefined {
  for (const [name, values] of Object.entries(queries)) {
    if (hostileCharacter(name) !== undefined) return hostileProblem('a query parameter name', name);
    for (const value of values) {
      const problem = hostileProblem(`the query parameter '${name.slice(0, 40)}'`, value);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}
