/**
 * The one way wiring modules keep a value for the life of a Lambda container: built on first use,
 * rebuilt only when one of its inputs changed (an SDK client replaced by `resetClients`, another
 * table name or key id: the local stack restarting in one process, tests). Keeping the value keeps
 * what lives in it, e.g. an EnvelopeEncryptor's data key cache, across invocations.
 *
 *   const stores = new ContainerCache<WebhookStore>();
 *   export const webhookStore = () => stores.get([dynamoDbClient(), tableName('webhooks')], ([db, table]) => new WebhookStore(db, table));
 */
export class ContainerCache<T> {
  private current: { inputs: readonly unknown[]; value: T } | undefined;

  get<const I extends readonly unknown[]>(inputs: I, build: (inputs: I) => T): T {
    const current = this.current;
    if (current && current.inputs.length === inputs.length && current.inputs.every((input, i) => input === inputs[i])) return current.value;
    const value = build(inputs);
    this.current = { inputs, value };
    return value;
  }
}

/**
 * Values kept in the container for a bounded age, by key: a lookup whose entry was loaded less than
 * `maxAgeMs` before `nowMs` is answered from the container, any other loads afresh. The age of an
 * entry counts from the moment its load STARTED (the caller's clock), so a change committed at T
 * is seen by every lookup at T + maxAgeMs or later: that is the whole staleness bound. Concurrent
 * lookups of one key share one load; a failed load is not kept; a clock that went backwards
 * reloads; at most `maxEntries` keys are kept (the oldest loaded goes first). maxAgeMs 0: no cache.
 */
export class BoundedAgeCache<V> {
  private readonly entries = new Map<string, { loadedAtMs: number; value: Promise<V> }>();

  constructor(
    readonly maxAgeMs: number,
    private readonly maxEntries: number,
  ) {}

  get(key: string, nowMs: number, load: () => Promise<V>): Promise<V> {
    if (this.maxAgeMs <= 0) return load();
    const hit = this.entries.get(key);
    if (hit && nowMs >= hit.loadedAtMs && nowMs - hit.loadedAtMs < this.maxAgeMs) return hit.value;
    const entry = { loadedAtMs: nowMs, value: load() };
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    entry.value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry.value;
  }

  /** Number of keys held (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }
}
