/**
 * Fixed-window counters in bounded memory, with O(1) work per request and an eviction rule that
 * cannot be used to lift someone's refusal or to escape one's own limit. Internal: the in-memory
 * rate limiters and the metadata-document fetch budgets count with it.
 *
 * Counters live in one map for lookup and in intrusive lists, so that every step is O(1) (no scan,
 * and no iteration over a `Map` whose deleted head entries V8 would skip one by one):
 * - `open`: windows still under their limit, oldest window first (a window joins the tail when it
 *   starts, so the head is always the oldest);
 * - `full`, one list per window length: windows that reached their limit, in the order they
 *   reached it (so, within one length, roughly in the order they end).
 *
 * When the table is full, a new key takes the slot of an ended window at the head of a `full`
 * list, else of the oldest `open` window. A window that reached its limit is never evicted before
 * it ends: spraying keys cannot lift a refusal in force. Spraying can make the table forget a
 * counter under its limit, which gives that key at most its limit again, after the sprayer started
 * `maxKeys` newer windows, each with a limit of its own: nothing a sprayer could not have had from
 * those keys directly.
 *
 * When every slot holds a refusal in force, a new key is counted in an *overflow* window that all
 * such keys of one kind share (the caller names it, e.g. the bucket), with the caller's limit: it
 * is never let through uncounted, and no victim's counter is dropped. Overflow windows live apart
 * from the table, one per name, so memory stays bounded by `maxKeys` plus the few names in use.
 * @module
 */

/** One window: when it started (epoch ms), how long it lasts and how many requests it counted. */
export interface CounterWindow {
  readonly start: number;
  readonly durationMs: number;
  readonly count: number;
}

/** The limit a key is counted against. */
export interface WindowLimit {
  /** Requests allowed per window; a window whose count passes it is a refusal in force. */
  readonly points: number;
  readonly durationMs: number;
  /**
   * When set, a window that passes `points` becomes a block of this length from that moment
   * (rate-limiter-flexible's `blockDuration`): refused until it ends, then forgotten.
   */
  readonly blockMs?: number;
  /**
   * Names the overflow window shared by the keys counted when the table has no slot for them.
   * Keys with different limits must use different names.
   */
  readonly overflow: string;
}

interface Node {
  readonly key: string | undefined;
  start: number;
  durationMs: number;
  count: number;
  blocked: boolean;
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

function ended(node: Node, now: number): boolean {
  return node.start + node.durationMs <= now;
}

function freshNode(key: string | undefined, limit: WindowLimit, now: number): Node {
  return {
    key,
    start: now,
    durationMs: limit.durationMs,
    count: 0,
    blocked: false,
    list: undefined,
    prev: undefined,
    next: undefined,
  };
}

/** Adds `amount` to a window; one that passes its limit becomes a block when the limit has one. */
function add(node: Node, limit: WindowLimit, amount: number, now: number): void {
  node.count += amount;
  if (limit.blockMs !== undefined && !node.blocked && node.count > limit.points) {
    node.blocked = true;
    node.start = now;
    node.durationMs = limit.blockMs;
  }
}

/**
 * Bounded fixed-window counters keyed by string.
 *
 * @example
 * ```ts
 * const table = new WindowTable(10_000);
 * const limit = { points: 60, durationMs: 60_000, overflow: 'authorize' };
 * const window = table.count('ip:203.0.113.7', limit, Date.now());
 * if (window.count > limit.points) console.log('over the limit');
 * ```
 */
export class WindowTable {
  readonly #nodes = new Map<string, Node>();
  readonly #open = new List();
  /** Windows that reached their limit, one list per window length (a handful of lengths). */
  readonly #full = new Map<number, List>();
  readonly #overflow = new Map<string, Node>();
  readonly #maxKeys: number;
  /** Entries examined by eviction since creation: at most one per window length, plus one. */
  #evictionSteps = 0;
  /** Counts that found no slot and went to an overflow window. */
  #overflowCounts = 0;

  /** @param maxKeys - the most counters kept (at least 1) */
  constructor(maxKeys: number) {
    this.#maxKeys = Math.max(1, Math.floor(maxKeys));
  }

  /** Counters held now (ended windows included until touched or evicted; overflow windows not). */
  get size(): number {
    return this.#nodes.size;
  }

  /** Entries examined by eviction so far; for tests that the cost per request stays flat. */
  get evictionSteps(): number {
    return this.#evictionSteps;
  }

  /** Counts that went to an overflow window so far; for tests and diagnostics. */
  get overflowCounts(): number {
    return this.#overflowCounts;
  }

  /**
   * The current window of `key`, without counting; `undefined` when none is running at `now`.
   * With `overflow`, a key that has no window while the table has no slot to give it gets the
   * running overflow window of that name: what counting it would add to.
   */
  peek(key: string, now: number, overflow?: string): CounterWindow | undefined {
    const node = this.#nodes.get(key);
    if (node !== undefined) {
      if (!ended(node, now)) return node;
      this.#delete(node);
    }
    if (overflow === undefined || this.#hasRoom(now)) return undefined;
    const shared = this.#overflow.get(overflow);
    return shared === undefined || ended(shared, now) ? undefined : shared;
  }

  /**
   * Counts `amount` requests for `key` against `limit`.
   *
   * @returns the window after counting (`count` above `limit.points` means refused): the key's
   * own, or the overflow window named by `limit.overflow` when every slot holds a refusal in force
   */
  count(key: string, limit: WindowLimit, now: number, amount = 1): CounterWindow {
    let node = this.peek(key, now) as Node | undefined;
    if (node === undefined) {
      if (!this.#makeRoom(now)) return this.#countOverflow(limit, now, amount);
      node = freshNode(key, limit, now);
      this.#nodes.set(key, node);
      this.#open.append(node);
    }
    const wasBlocked = node.blocked;
    add(node, limit, amount, now);
    if (node.count >= limit.points && (node.list === this.#open || node.blocked !== wasBlocked)) {
      // Reached its limit, or just became a block (a new length): joins the tail of its full list.
      node.list?.remove(node);
      this.#fullList(node.durationMs).append(node);
    }
    return node;
  }

  /** Forgets `key` (a success that resets a count of failures); whether it had a window. */
  delete(key: string): boolean {
    const node = this.#nodes.get(key);
    if (node === undefined) return false;
    this.#delete(node);
    return true;
  }

  #countOverflow(limit: WindowLimit, now: number, amount: number): CounterWindow {
    this.#overflowCounts++;
    let shared = this.#overflow.get(limit.overflow);
    if (shared === undefined || ended(shared, now)) {
      shared = freshNode(undefined, limit, now);
      this.#overflow.set(limit.overflow, shared);
    }
    add(shared, limit, amount, now);
    return shared;
  }

  #fullList(durationMs: number): List {
    let list = this.#full.get(durationMs);
    if (list === undefined) {
      list = new List();
      this.#full.set(durationMs, list);
    }
    return list;
  }

  #delete(node: Node): void {
    node.list?.remove(node);
    if (node.key !== undefined) this.#nodes.delete(node.key);
  }

  /** Whether a new key would get a slot at `now`, without freeing one. */
  #hasRoom(now: number): boolean {
    if (this.#nodes.size < this.#maxKeys || this.#open.head !== undefined) return true;
    for (const list of this.#full.values()) {
      if (list.head !== undefined && ended(list.head, now)) return true;
    }
    return false;
  }

  /** Frees one slot when the table is full; false when every counter is a refusal in force. */
  #makeRoom(now: number): boolean {
    if (this.#nodes.size < this.#maxKeys) return true;
    for (const list of this.#full.values()) {
      const head = list.head;
      if (head === undefined) continue;
      this.#evictionSteps++;
      if (ended(head, now)) {
        this.#delete(head);
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
