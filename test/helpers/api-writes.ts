/**
 * Valid requests for every create and update of the reference server's business API, read off the
 * seeded school, so that a test can change exactly one field and know that everything else passes:
 * what it sends then reaches the handler and the storage unless that one field is refused.
 *
 * For each `POST` and `PATCH` route with a JSON body: its path with the ids of seeded records (each
 * `{param}` is the first record of the collection before it), and a body made of a seeded record's
 * fields that the route's schema takes (the first record of the collection for a create, the record
 * itself for an update).
 */
import type { z } from 'zod';
import type { ApiRoute } from '../../examples/course-school/src/api/route.js';
import { API_ROUTES } from '../../examples/course-school/src/api/route-table.js';

/** A valid write: the route, its path (under `/api/v1`) and a body it accepts. */
export interface ValidWrite {
  readonly route: ApiRoute;
  readonly method: 'POST' | 'PATCH';
  readonly path: string;
  readonly body: Readonly<Record<string, unknown>>;
  /**
   * Where a string can go in this body: every string at any depth (`['features', '0']`) and every
   * member the schema takes (`['avatar_url']`, whatever its value now).
   */
  readonly fields: readonly (readonly string[])[];
}

/** Reads a path under `/api/v1` as the school owner; resolves to its JSON. */
export type OwnerRead = (path: string) => Promise<unknown>;

/** The paths of every string in `value`, at any depth. */
function stringPaths(value: unknown, at: readonly string[] = []): string[][] {
  if (typeof value === 'string') return [[...at]];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringPaths(item, [...at, String(i)]));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([key, member]) => stringPaths(member, [...at, key]));
  }
  return [];
}

/** `body` with `value` at `path` (a copy). */
export function withValueAt(body: unknown, path: readonly string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(body)) {
    const copy = [...body];
    copy[Number(head)] = withValueAt(copy[Number(head)], rest, value);
    return copy;
  }
  const object = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  return { ...object, [head]: withValueAt(object[head], rest, value) };
}

/**
 * Every JSON create and update of the route table, with a valid body.
 *
 * @param read - reads as the owner (who sees every record)
 * @throws Error when a collection has no seeded record to copy
 */
export async function validWrites(read: OwnerRead): Promise<ValidWrite[]> {
  const firstOf = async (path: string): Promise<Record<string, unknown>> => {
    const page = (await read(path)) as { data?: Record<string, unknown>[] };
    const first = page.data?.[0];
    if (first === undefined) throw new Error(`no seeded record under ${path} to build a valid write from`);
    return first;
  };
  const fill = async (template: string): Promise<string> => {
    let path = '';
    for (const segment of template.split('/').slice(1)) {
      path += segment.startsWith('{') ? `/${String((await firstOf(path)).id)}` : `/${segment}`;
    }
    return path;
  };

  const writes: ValidWrite[] = [];
  for (const route of API_ROUTES) {
    if (route.body?.kind !== 'json' || (route.method !== 'POST' && route.method !== 'PATCH')) continue;
    const path = await fill(route.path);
    const source =
      route.method === 'POST' ? await firstOf(path) : ((await read(path)) as Record<string, unknown>);
    const names = Object.keys((route.body.schema as z.ZodObject).shape);
    const body = Object.fromEntries(
      names.filter((name) => source[name] !== undefined).map((n) => [n, source[n]]),
    );
    const fields = [
      ...stringPaths(body),
      ...names.filter((name) => typeof body[name] !== 'string').map((n) => [n]),
    ];
    writes.push({ route, method: route.method, path, body, fields });
  }
  return writes;
}
