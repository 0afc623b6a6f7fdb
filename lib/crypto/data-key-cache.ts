/**
 * Bounded cache of plaintext data keys, so one KMS call serves many messages.
 *
 * Bounds, all enforced on every access:
 *   - maxAgeMs:   an entry older than this is evicted (clock injectable; defaults to Date.now at
 *                 call time, so jest fake timers move it too)
 *   - maxUses:    an entry is evicted as soon as it has served this many operations
 *   - maxEntries: least recently used entries are evicted beyond this count
 *
 * Evicted key buffers are overwritten with zeros (best effort: V8 may have copied bytes we cannot
 * reach, and the KMS SDK's own response buffers are zeroed by the caller).
 *
 * Keys never leave the cache: callers pass a synchronous function that receives the key and
 * must finish using it before returning (node:crypto copies the key into the cipher context at
 * createCipheriv / createDecipheriv time). Concurrent misses for the same id share one load, so
 * a burst of N parallel encrypts costs one GenerateDataKey.
 */

export const DEFAULT_DATA_KEY_MAX_AGE_MS = 5 * 60 * 1000;
export const DEFAULT_DATA_KEY_MAX_USES = 10_000;
/** Encrypt side: distinct data key contexts (purposes) held at once. */
export const DEFAULT_DATA_KEY_MAX_ENTRIES = 100;
/** Decrypt side: distinct decrypted data keys held at once. */
export const DEFAULT_DECRYPTED_KEY_MAX_ENTRIES = 1_000;

export interface DataKeyCacheOptions {
  maxAgeMs?: number;
  /** Infinity allowed (decrypt side). */
  maxUses?: number;
  maxEntries?: number;
  /** epoch milliseconds; defaults to Date.now() */
  clock?: () => number;
}

export interface LoadedKey<M> {
  /** plaintext key; the cache takes ownership and zeroes it on eviction */
  key: Buffer;
  meta: M;
}

interface Entry<M> {
  key: Buffer;
  meta: M;
  createdAt: number;
  uses: number;
  evicted: boolean;
}

function checkBound(name: string, value: number, allowInfinity: boolean): number {
  const ok = allowInfinity && value === Infinity ? true : Number.isSafeInteger(value) && value >= 1;
  if (!ok) throw new RangeError(`${name} must be a positive integer${allowInfinity ? ' or Infinity' : ''}`);
  return value;
}

export class DataKeyCache<M> {
  readonly maxAgeMs: number;
  readonly maxUses: number;
  readonly maxEntries: number;
  private readonly clock: () => number;
  private readonly entries = new Map<string, Entry<M>>();
  private readonly pending = new Map<string, Promise<Entry<M>>>();

  constructor(options: DataKeyCacheOptions = {}) {
    this.maxAgeMs = checkBound('maxAgeMs', options.maxAgeMs ?? DEFAULT_DATA_KEY_MAX_AGE_MS, false);
    this.maxUses = checkBound('maxUses', options.maxUses ?? DEFAULT_DATA_KEY_MAX_USES, true);
    this.maxEntries = checkBound('maxEntries', options.maxEntries ?? DEFAULT_DATA_KEY_MAX_ENTRIES, false);
    this.clock = options.clock ?? (() => Date.now());
  }

  /** Number of live entries (after dropping expired ones). */
  get size(): number {
    this.sweep();
    return this.entries.size;
  }

  /**
   * Runs `fn` with the cached key for `id`, loading it with `load` on a miss. `fn` must be
   * synchronous and must not keep the key. Load errors propagate to every waiter.
   */
  async acquire<T>(id: string, load: () => Promise<LoadedKey<M>>, fn: (key: Buffer, meta: M) => T): Promise<T> {
    for (;;) {
      const cached = this.entries.get(id);
      if (cached) {
        const hit = this.tryUse(id, cached, fn, true);
        if (hit) return hit.value;
      }
      let pending = this.pending.get(id);
      if (!pending) {
        // load runs in a later microtask, so the map holds `pending` before `finally` can run
        pending = Promise.resolve()
          .then(load)
          .then(({ key, meta }) => this.insert(id, key, meta))
          .finally(() => this.pending.delete(id));
        this.pending.set(id, pending);
      }
      const fresh = await pending;
      // a just loaded key serves its waiters regardless of age; only the use count can force a reload
      const hit = this.tryUse(id, fresh, fn, false);
      if (hit) return hit.value;
    }
  }

  /** Stores a key (ownership passes to the cache), replacing and zeroing any entry under `id`. */
  put(id: string, key: Buffer, meta: M): void {
    this.insert(id, key, meta);
  }

  /** Evicts and zeroes every entry. */
  clear(): void {
    for (const [id, entry] of [...this.entries]) this.evict(id, entry);
  }

  private insert(id: string, key: Buffer, meta: M): Entry<M> {
    const previous = this.entries.get(id);
    if (previous) this.evict(id, previous);
    const entry: Entry<M> = { key, meta, createdAt: this.clock(), uses: 0, evicted: false };
    this.entries.set(id, entry);
    this.sweep();
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.evict(oldest.value, this.entries.get(oldest.value) as Entry<M>);
    }
    return entry;
  }

  private tryUse<T>(id: string, entry: Entry<M>, fn: (key: Buffer, meta: M) => T, checkAge: boolean): { value: T } | undefined {
    if (entry.evicted) return undefined;
    if ((checkAge && this.isExpired(entry)) || entry.uses >= this.maxUses) {
      this.evict(id, entry);
      return undefined;
    }
    entry.uses++;
    if (this.entries.get(id) === entry) {
      // LRU: move to the back of the insertion order
      this.entries.delete(id);
      this.entries.set(id, entry);
    }
    try {
      return { value: fn(entry.key, entry.meta) };
    } finally {
      if (entry.uses >= this.maxUses) this.evict(id, entry);
    }
  }

  private isExpired(entry: Entry<M>): boolean {
    return this.clock() - entry.createdAt >= this.maxAgeMs;
  }

  private sweep(): void {
    for (const [id, entry] of [...this.entries]) if (this.isExpired(entry)) this.evict(id, entry);
  }

  private evict(id: string, entry: Entry<M>): void {
    if (this.entries.get(id) === entry) this.entries.delete(id);
    if (!entry.evicted) {
      entry.evicted = true;
      entry.key.fill(0);
    }
  }
}
