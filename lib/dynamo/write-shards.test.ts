import { ascending, mergeSortedPartitions, partitionsOf, shardedKeyFor, shardKey, shardOf } from './write-shards';

describe('write shards', () => {
  it('a stable shard per id, spread evenly over the shards', () => {
    expect(shardOf('fp_0123', 16)).toBe(shardOf('fp_0123', 16));
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[shardOf(`packet-${i}`, 16)]!++;
    // 1,000 expected per shard
    expect(Math.min(...counts)).toBeGreaterThan(850);
    expect(Math.max(...counts)).toBeLessThan(1150);
    expect(shardKey('STATE#pending_match', 3)).toBe('STATE#pending_match#03');
    expect(partitionsOf('HELD', 2)).toEqual(['HELD', 'HELD#00', 'HELD#01']);
    expect(partitionsOf('HELD', 2)).toContain(shardedKeyFor('HELD', 'any id', 2));
  });

  describe('mergeSortedPartitions', () => {
    // 5 partitions of sorted keys, read through a pager that counts its calls
    const data = new Map<string, string[]>();
    for (let i = 0; i < 200; i++) {
      const key = `k${String((i * 7919) % 1000).padStart(4, '0')}`;
      const p = `p${i % 5}`;
      data.set(p, [...(data.get(p) ?? []), key].sort(ascending));
    }
    data.set('empty', []);
    const partitions = ['empty', 'p0', 'p1', 'p2', 'p3', 'p4'];
    let queries = 0;
    let itemsRead = 0;
    const fetch = async (partition: string, limit: number, start: number | undefined) => {
      queries++;
      const all = data.get(partition)!;
      const from = start ?? 0;
      const rows = all.slice(from, from + limit);
      itemsRead += rows.length;
      return { rows, ...(from + limit < all.length ? { lastKey: from + limit } : {}) };
    };
    const everything = [...data.values()].flat().sort(ascending);

    it('returns the first `limit` rows over all partitions in order, and whether more remain', async () => {
      queries = itemsRead = 0;
      const page = await mergeSortedPartitions(partitions, 20, ascending, fetch);
      expect(page.rows).toEqual(everything.slice(0, 20));
      expect(page.more).toBe(true);
      // lazy: about one page worth read, not 6 pages
      expect(itemsRead).toBeLessThan(20 * 3);
      expect(queries).toBeLessThanOrEqual(partitions.length * 2);
      const all = await mergeSortedPartitions(partitions, 1000, ascending, fetch);
      expect(all.rows).toEqual(everything);
      expect(all.more).toBe(false);
    });

    it('bounded concurrency: at most `concurrency` reads in flight, the same rows and calls as unbounded', async () => {
      let inFlight = 0;
      let maxInFlight = 0;
      const gated = async (partition: string, limit: number, start: number | undefined) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        // let every other started read run up to here before this one finishes
        await new Promise<void>((resolve) => setImmediate(resolve));
        inFlight--;
        return fetch(partition, limit, start);
      };
      for (const limit of [1, 20, 57, 1000]) {
        queries = itemsRead = 0;
        const unbounded = await mergeSortedPartitions(partitions, limit, ascending, gated);
        const unboundedCalls = { queries, itemsRead };
        expect(maxInFlight).toBe(partitions.length);
        maxInFlight = 0;
        queries = itemsRead = 0;
        const bounded = await mergeSortedPartitions(partitions, limit, ascending, gated, { concurrency: 2 });
        expect(maxInFlight).toBe(2);
        maxInFlight = 0;
        expect(bounded).toEqual(unbounded);
        expect({ queries, itemsRead }).toEqual(unboundedCalls);
      }
    });

    it('bounded concurrency: a failed read rejects the page and no further read starts', async () => {
      const started: string[] = [];
      const failing = async (partition: string, limit: number, start: number | undefined) => {
        started.push(partition);
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (partition === 'p0') throw new Error('throttled');
        return fetch(partition, limit, start);
      };
      await expect(mergeSortedPartitions(partitions, 20, ascending, failing, { concurrency: 2 })).rejects.toThrow('throttled');
      // 'empty' and 'p0' in flight; p0 fails: the worker that ran 'empty' may have started one more, nothing after
      expect(started.length).toBeLessThanOrEqual(3);
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(started.length).toBeLessThanOrEqual(3);
    });

    it('descending order and a page that ends exactly at the last row', async () => {
      const descending = (a: string, b: string) => ascending(b, a);
      const page = await mergeSortedPartitions(partitions, 200, descending, async (p, limit, start: number | undefined) => {
        const all = [...data.get(p)!].reverse();
        const from = start ?? 0;
        return { rows: all.slice(from, from + limit), ...(from + limit < all.length ? { lastKey: from + limit } : {}) };
      });
      expect(page.rows).toEqual([...everything].reverse());
      expect(page.more).toBe(false);
    });
  });
});
