/**
 * Write sharding for partition keys that every item of a busy kind would otherwise share (the
 * forms inbox states, the audit's unresolved failures of a day, the held HL7 records): the key gets
 * a shard suffix `<base>#<nn>` chosen by a stable hash of the item's own id, so writers spread
 * over `shards` partitions and anyone who knows the id can compute its partition again. Readers
 * query every shard (and the unsuffixed legacy key, where items written before sharding stay) and
 * merge the pages by sort key (mergeSortedPartitions), which keeps exactly the order one partition
 * would have had, sort keys being unique.
 */

/** FNV-1a (32 bit) of the id's UTF-16 code units: stable across processes and releases. */
function fnv1a(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The shard (0..shards-1) an id's items go to. */
export function shardOf(id: string, shards: number): number {
  return fnv1a(id) % shards;
}

/** `<base>#<nn>`: the partition key of shard `shard`. */
export function shardKey(base: string, shard: number): string {
  return `${base}#${String(shard).padStart(2, '0')}`;
}

/** The partition key of an id's items under `base`. */
export function shardedKeyFor(base: string, id: string, shards: number): string {
  return shardKey(base, shardOf(id, shards));
}

/** Every partition a reader of `base` queries: the legacy unsuffixed key first, then each shard. */
export function partitionsOf(base: string, shards: number): string[] {
  return [base, ...Array.from({ length: shards }, (_v, i) => shardKey(base, i))];
}

export interface PartitionBatch<T, K> {
  rows: T[];
  /** where this partition's query stopped (absent: nothing left in it) */
  lastKey?: K;
}

export interface MergeOptions {
  /**
   * At most this many partition reads in flight (a pool: the next starts when one finishes; after a
   * failure no further read starts). All of a round's reads at once when absent. For background
   * readers: no burst of `partitions` requests, and only this many requests are built before the
   * first one leaves. The rows returned do not depend on it.
   */
  concurrency?: number;
}

/**
 * The first `limit` rows over all `partitions` in `compare` order, each partition being read in
 * that order already (a Query on its sort key). Reads lazily: a first batch of about
 * limit / partitions (+4) per partition, then more only from a partition whose rows ran out while
 * it still has some, so a page costs about what one partition's page costs, not `partitions`
 * times it. `more`: some partition may still hold rows after the last one returned.
 */
export async function mergeSortedPartitions<T, K>(
  partitions: readonly string[],
  limit: number,
  compare: (a: T, b: T) => number,
  fetch: (partition: string, limit: number, startKey: K | undefined) => Promise<PartitionBatch<T, K>>,
  options: MergeOptions = {},
): Promise<{ rows: T[]; more: boolean }> {
  const batch = Math.max(1, Math.min(limit, Math.ceil(limit / partitions.length) + 4));
  const cursors = partitions.map((partition) => ({ partition, buffer: [] as T[], next: undefined as K | undefined, started: false }));
  const hasMore = (c: (typeof cursors)[number]) => !c.started || c.next !== undefined;
  const out: T[] = [];
  while (out.length < limit) {
    await forEachBounded(
      cursors.filter((c) => c.buffer.length === 0 && hasMore(c)),
      options.concurrency,
      async (c) => {
        const page = await fetch(c.partition, batch, c.next);
        c.started = true;
        c.buffer.push(...page.rows);
        c.next = page.lastKey;
      },
    );
    while (out.length < limit) {
      // a partition that ran dry but may hold more must be read before anything is taken
      if (cursors.some((c) => c.buffer.length === 0 && hasMore(c))) break;
      let best: (typeof cursors)[number] | undefined;
      for (const c of cursors) if (c.buffer.length && (!best || compare(c.buffer[0]!, best.buffer[0]!) < 0)) best = c;
      if (!best) break;
      out.push(best.buffer.shift()!);
    }
    if (cursors.every((c) => c.buffer.length === 0 && !hasMore(c))) break;
  }
  return { rows: out, more: cursors.some((c) => c.buffer.length > 0 || hasMore(c)) };
}

/** `run` for every item, at most `concurrency` at a time (all at once when absent); the first failure rejects and starts nothing more. */
async function forEachBounded<T>(items: readonly T[], concurrency: number | undefined, run: (item: T) => Promise<void>): Promise<void> {
  if (concurrency === undefined || concurrency >= items.length) {
    await Promise.all(items.map(run));
    return;
  }
  if (!(concurrency >= 1)) throw new RangeError('concurrency must be at least 1');
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const item = items[next++]!;
      try {
        await run(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Byte-order comparison of two sort keys (DynamoDB's order for the ASCII keys used here). */
export function ascending(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
