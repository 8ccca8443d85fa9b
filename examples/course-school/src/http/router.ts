/**
 * A small path router: a trie over path segments, so lookup costs one map access per segment
 * whatever the number of routes. Patterns use OpenAPI's syntax (`/courses/{courseId}`), the same
 * strings the OpenAPI document shows. A path that exists with another method gives 405 and `Allow`.
 * @module
 */
import { HttpError } from './response.js';

/** The result of a lookup. */
export type RouteMatch<T> =
  | { readonly kind: 'found'; readonly value: T; readonly params: Readonly<Record<string, string>> }
  | { readonly kind: 'method_not_allowed'; readonly allow: readonly string[] }
  | { readonly kind: 'not_found' };

interface Node<T> {
  readonly children: Map<string, Node<T>>;
  param: { readonly name: string; readonly node: Node<T> } | undefined;
  readonly methods: Map<string, T>;
}

const node = <T>(): Node<T> => ({ children: new Map(), param: undefined, methods: new Map() });

function segments(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

/** A router from (method, path) to values of type `T`. */
export class Router<T> {
  readonly #root: Node<T> = node();

  /** Adds a route; throws when the same method and pattern are added twice or params disagree. */
  add(method: string, pattern: string, value: T): this {
    let current = this.#root;
    for (const segment of segments(pattern)) {
      const param = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(segment);
      if (param === null) {
        let next = current.children.get(segment);
        if (next === undefined) {
          next = node();
          current.children.set(segment, next);
        }
        current = next;
        continue;
      }
      const name = param[1]!;
      if (current.param === undefined) current.param = { name, node: node() };
      else if (current.param.name !== name) {
        throw new TypeError(`${pattern}: parameter {${name}} conflicts with {${current.param.name}}`);
      }
      current = current.param.node;
    }
    if (current.methods.has(method)) throw new TypeError(`${method} ${pattern} is defined twice`);
    current.methods.set(method, value);
    return this;
  }

  /**
   * Finds the route of a request. `HEAD` falls back to `GET`. Static segments win over parameters.
   * @throws HttpError `invalid_request` when a path segment is not valid percent-encoding
   */
  find(method: string, path: string): RouteMatch<T> {
    let current: Node<T> | undefined = this.#root;
    let params: Record<string, string> | undefined;
    for (const segment of segments(path)) {
      const next: Node<T> | undefined = current.children.get(segment);
      if (next !== undefined) {
        current = next;
        continue;
      }
      if (current.param === undefined) return { kind: 'not_found' };
      params ??= {};
      params[current.param.name] = decodeSegment(segment);
      current = current.param.node;
    }
    const value = current.methods.get(method) ?? (method === 'HEAD' ? current.methods.get('GET') : undefined);
    if (value !== undefined) return { kind: 'found', value, params: params ?? {} };
    if (current.methods.size === 0) return { kind: 'not_found' };
    const allow = [...current.methods.keys()];
    if (allow.includes('GET')) allow.push('HEAD');
    return { kind: 'method_not_allowed', allow };
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError('invalid_request', 'the path is not valid percent-encoding');
  }
}
