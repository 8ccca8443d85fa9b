/**
 * Fixed-window counters in bounded memory, with O(1) work per request and an eviction rule that
 * cannot be used to reset someone else's limit. Internal: the in-memory rate limiter and the
 * metadata-document fetch budget count with it.
 *
 * Counters live in one map for lookup and in two intrusive lists, so that every step is O(1)
 * (no scan, and no iteration over a `Map` whose deleted head entries V8 would skip one by one):
 * - `open`: windows still under their limit, oldest window first (a window joins the tail when it
 *   starts, so the head is always the oldest);
 * - `full`: windows that reached their limit, in the order they reached it.
 *
 * When the table is full, a new key evicts the first `full` entry if its window has ended, else
 * the oldest `open` window. A window that reached its limit is therefore never evicted before it
 * ends: spraying keys can make the table forget counters that are under their limit (each forgotten
 * counter gives its key at most `points` more requests, after the sprayer spent `maxKeys` requests
 * on it), never a refusal in force. When every entry is a refusal in force, the new key is not
 * counted (it is allowed) until a window ends: memory stays bounded, and an attacker who can hold
 * `maxKeys` keys over their limits already has that many keys' worth of requests anyway.
 * @module
 */

/** One window: when it started (epoch ms) and how many requests it counted. */
export interface CounterWindow {
  readonly start: number;
  readonly durationMs: number;
  count: number;
}

/** What one count returned: the window after counting, or `undefined` when the table had no room. */
export type CountResult = CounterWindow | undefined;

interface Node extends CounterWindow {
  readonly key: string;
  list: List | undefined;
  prev: Node | undefined;
  next: Node | undefined;
}

/** A doubly linked list of nodes: O(1) append, removal and head. */
class List {
  head: Node | undefined;
  tail: Node | undefined;

  append(node: Node): void {
    node.list = this;
    node.prev = this.tail;
    node.next = undefined;
    if (this.tail === undefined) this.head = node;
    else this.tail.next = node;
    this.tail = node;
  }

  remove(node: Node): void {
    if (node.prev === undefined) this.head = node.next;
    else node.prev.next = node.next;
    if (node.next === undefined) this.tail = node.prev;
    else node.next.prev = node.prev;
    node.list = undefined;
    node.prev = undefined;
    node.next = undefined;
  }
}

/**
 * Bounded fixed-window counters keyed by string.
 *
 * @example
 * ```ts
 * const table = new WindowTable(10_000);
 * const window = table.count('ip:203.0.113.7', 60, 60_000, Date.now());
 * if (window !== undefined && window.count > 60) console.log('over the limit');
 * ```
 */
export class WindowTable {
  readonly #nodes = new Map<string, Node>();
  readonly #open = new List();
  readonly #full = new List();
  readonly #maxKeys: number;
  /** Entries examined by eviction since creation: at most two per insertion. */
  #evictionSteps = 0;

  /** @param maxKeys - the most counters kept (at least 1) */
  constructor(maxKeys: number) {
    this.#maxKeys = Math.max(1, Math.floor(maxKeys));
  }

  /** Counters held now (ended windows included until touched or evicted). */
  get size(): number {
    return this.#nodes.size;
  }

  /** Entries examined by eviction so far; for tests that the cost per request stays flat. */
  get evictionSteps(): number {
    return this.#evictionSteps;
  }

  /** The current window of `key`, without counting; `undefined` when none is running at `now`. */
  peek(key: string, now: number): CounterWindow | undefined {
    const node = this.#nodes.get(key);
    if (node === undefined) return undefined;
    if (node.start + node.durationMs <= now) {
      this.#delete(node);
      return undefined;
    }
    return node;
  }

  /**
   * Counts one request for `key` in a window of `durationMs` that allows `points` requests.
   *
   * @returns the window after counting (`count` above `points` means refused), or `undefined` when
   * the table is full of refusals in force and the key was not counted
   */
  count(key: string, points: number, durationMs: number, now: number): CountResult {
    let node = this.peek(key, now) as Node | undefined;
    if (node === undefined) {
      if (!this.#makeRoom(now)) return undefined;
      node = { key, start: now, durationMs, count: 0, list: undefined, prev: undefined, next: undefined };
      this.#nodes.set(key, node);
      this.#open.append(node);
    }
    node.count++;
    if (node.count >= points && node.list === this.#open) {
      this.#open.remove(node);
      this.#full.append(node);
    }
    return node;
  }

  #delete(node: Node): void {
    node.list?.remove(node);
    this.#nodes.delete(node.key);
  }

  /** Frees one slot when the table is full; false when every counter is a refusal in force. */
  #makeRoom(now: number): boolean {
    if (this.#nodes.size < this.#maxKeys) return true;
    const full = this.#full.head;
    if (full !== undefined) {
      this.#evictionSteps++;
      if (full.start + full.durationMs <= now) {
        this.#delete(full);
        return true;
      }
    }
    const open = this.#open.head;
    if (open === undefined) return false;
    this.#evictionSteps++;
    this.#delete(open);
    return true;
  }
}
